#include "core/protocol.hpp"
#include "core/build_info.hpp"
#include "core/log_text.hpp"

#include "core/checked_number.hpp"

namespace preflight::core {
namespace {

using nlohmann::json;

template <class... Ts>
struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Field accessors that throw a message naming the field; parse_message turns them into an Error.
struct FieldError {
    std::string message;
};

const json& field(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) {
        throw FieldError{std::string("missing field '") + key + "'"};
    }
    return *it;
}
std::string str(const json& j, const char* key) {
    const auto& v = field(j, key);
    if (!v.is_string()) {
        throw FieldError{std::string("field '") + key + "' must be a string"};
    }
    return v.get<std::string>();
}
// Every number a frame carries is a duration in seconds (a deadline, a heartbeat, a kv timeout),
// which the receiver turns into milliseconds: bounded here so that 1e308 cannot overflow there.
double num(const json& j, const char* key) {
    const auto& v = field(j, key);
    if (!v.is_number()) {
        throw FieldError{std::string("field '") + key + "' must be a number"};
    }
    const double d = v.get<double>();
    if (auto st = check_duration_s(d, key); !st) {
        throw FieldError{"field " + st.error().message};  // "field 'deadline_s' must be ..."
    }
    return d;
}
std::uint64_t u64(const json& j, const char* key) {
    const auto& v = field(j, key);
    if (!v.is_number_unsigned()) {
        throw FieldError{std::string("field '") + key + "' must be a non-negative integer"};
    }
    return v.get<std::uint64_t>();
}
std::vector<std::string> str_list(const json& j, const char* key) {
    const auto& v = field(j, key);
    if (!v.is_array()) {
        throw FieldError{std::string("field '") + key + "' must be an array"};
    }
    std::vector<std::string> out;
    for (const auto& e : v) {
        if (!e.is_string()) {
            throw FieldError{std::string("field '") + key + "' must hold strings"};
        }
        out.push_back(e.get<std::string>());
    }
    return out;
}
const json& obj(const json& j, const char* key) {
    const auto& v = field(j, key);
    if (!v.is_object()) {
        throw FieldError{std::string("field '") + key + "' must be an object"};
    }
    return v;
}

json to_json(const msg::Challenge& m) {
    return {{"type", "challenge"}, {"nonce", m.nonce}, {"version", m.version}};
}
json to_json(const msg::Hello& m) {
    return {{"type", "hello"},
            {"node", m.node},
            {"version", m.version},
            {"capabilities", m.capabilities},
            {"inventory", m.inventory},
            {"agent_nonce", m.agent_nonce},
            {"mac", m.mac}};
}
json to_json(const msg::Welcome& m) {
    return {{"type", "welcome"},
            {"run_id", m.run_id},
            {"heartbeat_s", m.heartbeat_s},
            {"proof", m.proof}};
}
json to_json(const msg::Reject& m) {
    return {{"type", "reject"}, {"reason", m.reason}};
}
json to_json(const msg::Run& m) {
    json j = {{"type", "run"},
              {"step", m.step},
              {"check", m.check},
              {"params", m.params},
              {"deadline_s", m.deadline_s},
              {"bind_address", m.bind_address}};
    if (m.group) {
        j["group"] = {{"id", m.group->id}, {"rank", m.group->rank}, {"members", m.group->members}};
    }
    return j;
}
json to_json(const msg::StepResult& m) {
    json r;
    preflight::core::to_json(r, m.result);
    return {{"type", "result"}, {"step", m.step}, {"result", r}};
}
json to_json(const msg::Heartbeat&) {
    return {{"type", "heartbeat"}};
}
json to_json(const msg::KvSet& m) {
    return {{"type", "kv_set"}, {"key", m.key}, {"value", m.value}};
}
json to_json(const msg::KvGet& m) {
    return {{"type", "kv_get"}, {"request", m.request}, {"key", m.key}, {"timeout_s", m.timeout_s}};
}
json to_json(const msg::KvValue& m) {
    json j = {{"type", "kv_value"}, {"request", m.request}, {"key", m.key}, {"error", m.error}};
    j["value"] = m.value ? json(*m.value) : json(nullptr);
    return j;
}
json to_json(const msg::Shutdown& m) {
    return {{"type", "shutdown"}, {"reason", m.reason}};
}

Message parse_typed(const std::string& type, const json& j) {
    if (type == "challenge") {
        return msg::Challenge{str(j, "nonce"), j.contains("version") ? str(j, "version") : ""};
    }
    if (type == "hello") {
        msg::Hello m;
        m.node = str(j, "node");
        m.version = str(j, "version");
        m.capabilities = str_list(j, "capabilities");
        m.inventory = obj(j, "inventory");
        m.agent_nonce = str(j, "agent_nonce");
        m.mac = str(j, "mac");
        return m;
    }
    if (type == "welcome") {
        return msg::Welcome{str(j, "run_id"), num(j, "heartbeat_s"), str(j, "proof")};
    }
    if (type == "reject") {
        return msg::Reject{str(j, "reason")};
    }
    if (type == "run") {
        msg::Run m;
        m.step = u64(j, "step");
        m.check = str(j, "check");
        m.params = obj(j, "params");
        m.deadline_s = num(j, "deadline_s");
        m.bind_address = str(j, "bind_address");
        if (auto it = j.find("group"); it != j.end() && !it->is_null()) {
            const json& g = *it;
            if (!g.is_object()) {
                throw FieldError{"field 'group' must be an object"};
            }
            msg::Group group;
            group.id = str(g, "id");
            const auto& rank = field(g, "rank");
            if (!rank.is_number_integer()) {
                throw FieldError{"field 'group.rank' must be an integer"};
            }
            group.rank = rank.get<int>();
            group.members = str_list(g, "members");
            if (rank.get<std::int64_t>() < 0 ||
                rank.get<std::int64_t>() >= std::ssize(group.members)) {
                throw FieldError{"field 'group.rank' is out of range"};
            }
            m.group = std::move(group);
        }
        return m;
    }
    if (type == "result") {
        msg::StepResult m;
        m.step = u64(j, "step");
        const json& r = obj(j, "result");
        try {
            from_json(r, m.result);
        } catch (const std::exception& e) {
            throw FieldError{std::string("field 'result': ") + e.what()};
        }
        return m;
    }
    if (type == "heartbeat") {
        return msg::Heartbeat{};
    }
    if (type == "kv_set") {
        return msg::KvSet{str(j, "key"), str(j, "value")};
    }
    if (type == "kv_get") {
        return msg::KvGet{u64(j, "request"), str(j, "key"), num(j, "timeout_s")};
    }
    if (type == "kv_value") {
        msg::KvValue m;
        m.request = u64(j, "request");
        m.key = str(j, "key");
        m.error = str(j, "error");
        const auto& v = field(j, "value");
        if (v.is_string()) {
            m.value = v.get<std::string>();
        } else if (!v.is_null()) {
            throw FieldError{"field 'value' must be a string or null"};
        }
        return m;
    }
    if (type == "shutdown") {
        return msg::Shutdown{str(j, "reason")};
    }
    throw FieldError{"unknown message type '" + type + "'"};
}

}  // namespace

bool json_nesting_exceeds(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // skip the escaped character
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) {
                return true;
            }
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return false;
}

std::string_view message_type(const Message& m) {
    static constexpr std::string_view k_names[] = {"challenge", "hello",    "welcome",   "reject",
                                                   "run",       "result",   "heartbeat", "kv_set",
                                                   "kv_get",    "kv_value", "shutdown"};
    return k_names[m.index()];
}

std::string serialize(const Message& m) {
    json j = std::visit([](const auto& v) { return to_json(v); }, m);
    j["v"] = k_protocol_version;
    // Invalid UTF-8 in a detail string must not throw out of a send path.
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// Who sent a frame of another version, as far as it says: " from the agent 'gpu001' (preflight
// 0.1.0)". Strings only, escaped for a log and cut (the peer is not authenticated).
std::string from_peer(const json& j) {
    auto text = [&j](const char* key) {
        auto it = j.find(key);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string type = text("type");
    // Escaped and cut here: the agent logs this error as it is.
    const std::string build = escape_for_log(text("version"), k_log_name_bytes);
    const std::string who =
        type == "hello"       ? "the agent '" + escape_for_log(text("node"), k_log_name_bytes) + "'"
        : type == "challenge" ? std::string("the controller")
                              : std::string("the peer");
    return " from " + who + (build.empty() ? "" : " (preflight " + build + ")");
}

}  // namespace

std::optional<long long> foreign_protocol_version(std::string_view payload) {
    if (json_nesting_exceeds(payload, k_max_json_depth)) {
        return std::nullopt;
    }
    const json j = json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
        return std::nullopt;
    }
    auto v = j.find("v");
    if (v == j.end() || !v->is_number_integer() || *v == k_protocol_version) {
        return std::nullopt;
    }
    return v->get<long long>();
}

Result<Message> parse_message(std::string_view payload) {
    // The most common frame at scale, byte for byte as serialize() writes it: no JSON parse.
    static const std::string k_heartbeat = serialize(msg::Heartbeat{});
    if (payload == k_heartbeat) {
        return Message{msg::Heartbeat{}};
    }
    if (json_nesting_exceeds(payload, k_max_json_depth)) {
        return Error{"JSON nested deeper than " + std::to_string(k_max_json_depth) + " levels"};
    }
    json j = json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        return Error{"malformed JSON"};
    }
    if (!j.is_object()) {
        return Error{"frame is not a JSON object"};
    }
    try {
        auto v = field(j, "v");
        if (!v.is_number_integer() || v != k_protocol_version) {
            return Error{"unsupported protocol version " + v.dump() + from_peer(j) +
                         "; this side is preflight " + std::string(build_version()) +
                         " and speaks protocol " + std::to_string(k_protocol_version)};
        }
        return parse_typed(str(j, "type"), j);
    } catch (const FieldError& e) {
        return Error{e.message};
    } catch (const json::exception& e) {
        return Error{e.what()};
    }
}

}  // namespace preflight::core
