#include "core/protocol.hpp"
#include "core/build_info.hpp"
#include "core/heartbeat.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A sample of every message type, with every optional part filled in.
std::vector<Message> samples() {
    msg::Hello hello;
    hello.node = "gpu001";
    hello.version = "0.1.0";
    hello.capabilities = {"link.netdev", "collective.gloo_allreduce"};
    hello.inventory = {{"pid", 42}, {"sysfs_root", "/"}};
    hello.mac = std::string(64, 'a');

    msg::Run run;
    run.step = 7;
    run.check = "collective.gloo_allreduce";
    run.params = {{"bytes", 1024}, {"iterations", 3}};
    run.deadline_s = 12.5;
    run.group = msg::Group{"r1g0", 1, {"n1", "n2"}};
    run.bind_address = "10.0.0.2";

    msg::Run plain_run;
    plain_run.step = 8;
    plain_run.check = "link.netdev";

    msg::StepResult result;
    result.step = 7;
    result.result.check = "collective.gloo_allreduce";
    result.result.verdict = Verdict::warn;
    result.result.metrics = {{"busbw_gbps", 11.25}, {"seconds", 0.5}};
    result.result.detail = "slow-ish";
    result.result.seconds = 1.75;

    return {msg::Challenge{"00ff"},
            hello,
            msg::Welcome{"run-1", 0.5},
            msg::Reject{"authentication failed"},
            run,
            plain_run,
            result,
            msg::Heartbeat{},
            msg::KvSet{"g/rank0", "aGVsbG8="},
            msg::KvGet{3, "g/rank1", 2.5},
            msg::KvValue{3, "g/rank1", std::string("aGk="), ""},
            msg::KvValue{4, "g/rank2", std::nullopt, "key 'g/rank2' not set within 1.0 s"},
            msg::Shutdown{"run finished"}};
}

Message parse_ok(const std::string& text) {
    auto parsed = parse_message(text);
    EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message);
    return parsed.ok() ? *parsed : Message{msg::Heartbeat{}};
}

std::string parse_error(const json& j) {
    auto parsed = parse_message(j.dump());
    EXPECT_FALSE(parsed.ok()) << j.dump();
    return parsed.ok() ? std::string() : parsed.error().message;
}

TEST(Protocol, EveryMessageTypeRoundTrips) {
    for (const auto& message : samples()) {
        std::string text = serialize(message);
        json j = json::parse(text);
        EXPECT_EQ(j.at("v"), k_protocol_version);
        EXPECT_EQ(j.at("type").get<std::string>(), message_type(message));
        auto parsed = parse_message(text);
        ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message;
        EXPECT_EQ(parsed->index(), message.index()) << text;
        EXPECT_EQ(serialize(*parsed), text);
    }
}

TEST(Protocol, EveryTypeNameIsCovered) {
    std::set<std::string> types;
    for (const auto& message : samples()) {
        types.insert(std::string(message_type(message)));
    }
    EXPECT_EQ(types.size(), std::variant_size_v<Message>);
}

TEST(Protocol, FieldsSurviveTheRoundTrip) {
    auto all = samples();
    auto hello = std::get<msg::Hello>(parse_ok(serialize(all[1])));
    EXPECT_EQ(hello.node, "gpu001");
    EXPECT_EQ(hello.capabilities.size(), 2u);
    EXPECT_EQ(hello.inventory.at("pid"), 42);
    EXPECT_EQ(hello.mac, std::string(64, 'a'));

    auto run = std::get<msg::Run>(parse_ok(serialize(all[4])));
    EXPECT_EQ(run.step, 7u);
    EXPECT_EQ(run.check, "collective.gloo_allreduce");
    EXPECT_EQ(run.params.at("bytes"), 1024);
    EXPECT_DOUBLE_EQ(run.deadline_s, 12.5);
    ASSERT_TRUE(run.group.has_value());
    EXPECT_EQ(run.group->id, "r1g0");
    EXPECT_EQ(run.group->rank, 1);
    EXPECT_EQ(run.group->members, (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(run.bind_address, "10.0.0.2");

    auto plain = std::get<msg::Run>(parse_ok(serialize(all[5])));
    EXPECT_FALSE(plain.group.has_value());
    EXPECT_TRUE(plain.params.is_object());

    auto result = std::get<msg::StepResult>(parse_ok(serialize(all[6])));
    EXPECT_EQ(result.step, 7u);
    EXPECT_EQ(result.result.verdict, Verdict::warn);
    EXPECT_DOUBLE_EQ(result.result.metrics.at("busbw_gbps"), 11.25);
    EXPECT_EQ(result.result.detail, "slow-ish");
    EXPECT_DOUBLE_EQ(result.result.seconds, 1.75);

    auto welcome = std::get<msg::Welcome>(parse_ok(serialize(all[2])));
    EXPECT_EQ(welcome.run_id, "run-1");
    EXPECT_DOUBLE_EQ(welcome.heartbeat_s, 0.5);

    auto value = std::get<msg::KvValue>(parse_ok(serialize(all[10])));
    ASSERT_TRUE(value.value.has_value());
    EXPECT_EQ(*value.value, "aGk=");
    auto timeout = std::get<msg::KvValue>(parse_ok(serialize(all[11])));
    EXPECT_FALSE(timeout.value.has_value());
    EXPECT_THAT(timeout.error, HasSubstr("not set"));

    auto get = std::get<msg::KvGet>(parse_ok(serialize(all[9])));
    EXPECT_EQ(get.request, 3u);
    EXPECT_DOUBLE_EQ(get.timeout_s, 2.5);
}

TEST(Protocol, NullGroupMeansNoGroup) {
    auto run = std::get<msg::Run>(parse_ok(
        R"({"v":2,"type":"run","step":1,"check":"c","params":{},"deadline_s":1,"bind_address":"","group":null})"));
    EXPECT_FALSE(run.group.has_value());
}

TEST(Protocol, VersionMissing) {
    EXPECT_THAT(parse_error({{"type", "heartbeat"}}), HasSubstr("'v'"));
}

TEST(Protocol, VersionWrong) {
    // Version 1 had no mutual handshake: an old agent is told so, not misread.
    EXPECT_THAT(parse_error({{"type", "heartbeat"}, {"v", 1}}),
                HasSubstr("unsupported protocol version 1 from the peer; this side is preflight " +
                          std::string(build_version()) + " and speaks protocol 2"));
    EXPECT_THAT(parse_error({{"type", "heartbeat"}, {"v", 3}}),
                HasSubstr("unsupported protocol version 3"));
    EXPECT_THAT(parse_error({{"type", "heartbeat"}, {"v", 0}}), HasSubstr("unsupported"));
    EXPECT_THAT(parse_error({{"type", "heartbeat"}, {"v", "1"}}), HasSubstr("unsupported"));
    EXPECT_THAT(parse_error({{"type", "heartbeat"}, {"v", 1.5}}), HasSubstr("unsupported"));
    EXPECT_THAT(parse_error({{"type", "heartbeat"}, {"v", -1}}), HasSubstr("unsupported"));
}

// The hello an agent from before f520bcc sent (version string "0.1.0", protocol 1: the fields of
// core/protocol.cpp at f520bcc^): the refusal names the agent, its build and protocol, and ours.
TEST(Protocol, VersionMismatchNamesBothSides) {
    const std::string old_hello =
        R"({"agent_nonce":"5f0c1a7e9b2d4c6e8a0b1c2d3e4f5a6b","capabilities":["link.netdev"],)"
        R"("inventory":{"pid":4242,"sysfs_root":"/"},"mac":"00","node":"gpu017","type":"hello",)"
        R"("v":1,"version":"0.1.0"})";
    auto parsed = parse_message(old_hello);
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().message,
              "unsupported protocol version 1 from the agent 'gpu017' (preflight 0.1.0); this side "
              "is preflight " +
                  std::string(build_version()) + " and speaks protocol 2");
    EXPECT_EQ(foreign_protocol_version(old_hello), 1);
    // A controller's challenge of a later version, read by this agent.
    auto challenge = parse_message(R"({"type":"challenge","nonce":"ab","version":"0.9.0","v":3})");
    ASSERT_FALSE(challenge);
    EXPECT_THAT(challenge.error().message,
                HasSubstr("version 3 from the controller (preflight 0.9.0); this side is"));
    // The peer's strings are escaped and cut: no forged log lines, no megabytes in a log.
    auto hostile = parse_message(R"({"type":"hello","node":"n1\nERROR forged","version":")" +
                                 std::string(5000, 'x') + R"(","v":7})");
    ASSERT_FALSE(hostile);
    EXPECT_THAT(hostile.error().message, HasSubstr("from the agent 'n1\\nERROR forged'"));
    EXPECT_EQ(hostile.error().message.find('\n'), std::string::npos);
    EXPECT_LT(hostile.error().message.size(), 400u);
    // Our own version, garbage and a non-integer version are not another protocol.
    EXPECT_FALSE(foreign_protocol_version(serialize(msg::Heartbeat{})));
    EXPECT_FALSE(foreign_protocol_version("not json"));
    EXPECT_FALSE(foreign_protocol_version(R"({"v":"1","type":"hello"})"));
    // The challenge carries the controller's version both ways.
    auto round = parse_message(serialize(msg::Challenge{"ab", "1.2.3"}));
    ASSERT_TRUE(round);
    EXPECT_EQ(std::get<msg::Challenge>(*round).version, "1.2.3");
}

TEST(Protocol, VersionThatWrapsToOneIsStillWrong) {
    // 2^32 + 2 must not be narrowed to int and read as version 2.
    EXPECT_FALSE(parse_message(R"({"type":"heartbeat","v":4294967298})").ok());
}

TEST(Protocol, UnknownType) {
    EXPECT_THAT(parse_error({{"type", "teleport"}, {"v", k_protocol_version}}),
                HasSubstr("unknown message type 'teleport'"));
}

TEST(Protocol, TypeMissingOrNotAString) {
    EXPECT_THAT(parse_error({{"v", k_protocol_version}}), HasSubstr("'type'"));
    EXPECT_THAT(parse_error({{"v", k_protocol_version}, {"type", 3}}), HasSubstr("'type'"));
}

TEST(Protocol, MissingFieldsAreNamed) {
    struct Case {
        json message;
        std::string field;
    };
    std::vector<Case> cases = {
        {{{"type", "challenge"}}, "nonce"},
        {{{"type", "hello"},
          {"version", "1"},
          {"capabilities", json::array()},
          {"inventory", json::object()},
          {"mac", "m"}},
         "node"},
        {{{"type", "hello"},
          {"node", "n"},
          {"version", "1"},
          {"inventory", json::object()},
          {"mac", "m"}},
         "capabilities"},
        {{{"type", "hello"},
          {"node", "n"},
          {"version", "1"},
          {"capabilities", json::array()},
          {"inventory", json::object()},
          {"agent_nonce", "a"}},
         "mac"},
        {{{"type", "hello"},
          {"node", "n"},
          {"version", "1"},
          {"capabilities", json::array()},
          {"inventory", json::object()},
          {"mac", "m"}},
         "agent_nonce"},
        {{{"type", "welcome"}, {"run_id", "r"}}, "heartbeat_s"},
        {{{"type", "welcome"}, {"run_id", "r"}, {"heartbeat_s", 1.0}}, "proof"},
        {{{"type", "reject"}}, "reason"},
        {{{"type", "run"},
          {"check", "c"},
          {"params", json::object()},
          {"deadline_s", 1},
          {"bind_address", ""}},
         "step"},
        {{{"type", "run"},
          {"step", 1},
          {"check", "c"},
          {"params", json::object()},
          {"bind_address", ""}},
         "deadline_s"},
        {{{"type", "result"}, {"step", 1}}, "result"},
        {{{"type", "kv_set"}, {"key", "k"}}, "value"},
        {{{"type", "kv_get"}, {"request", 1}, {"key", "k"}}, "timeout_s"},
        {{{"type", "kv_value"}, {"request", 1}, {"key", "k"}, {"error", ""}}, "value"},
        {{{"type", "shutdown"}}, "reason"},
        {{{"type", "run"},
          {"step", 1},
          {"check", "c"},
          {"params", json::object()},
          {"deadline_s", 1},
          {"bind_address", ""},
          {"group", {{"rank", 0}, {"members", {"a"}}}}},
         "id"},
    };
    for (auto& c : cases) {
        c.message["v"] = k_protocol_version;
        auto message = parse_error(c.message);
        EXPECT_THAT(message, HasSubstr("missing field '" + c.field + "'")) << c.message.dump();
    }
}

TEST(Protocol, WronglyTypedFieldsAreNamed) {
    struct Case {
        json message;
        std::string field;
    };
    std::vector<Case> cases = {
        {{{"type", "challenge"}, {"nonce", 5}}, "'nonce' must be a string"},
        {{{"type", "hello"},
          {"node", "n"},
          {"version", "1"},
          {"capabilities", "x"},
          {"inventory", json::object()},
          {"mac", "m"}},
         "'capabilities' must be an array"},
        {{{"type", "hello"},
          {"node", "n"},
          {"version", "1"},
          {"capabilities", {1, 2}},
          {"inventory", json::object()},
          {"mac", "m"}},
         "'capabilities' must hold strings"},
        {{{"type", "hello"},
          {"node", "n"},
          {"version", "1"},
          {"capabilities", json::array()},
          {"inventory", json::array()},
          {"mac", "m"}},
         "'inventory' must be an object"},
        {{{"type", "welcome"}, {"run_id", "r"}, {"heartbeat_s", "2"}},
         "'heartbeat_s' must be a number"},
        {{{"type", "run"},
          {"step", -1},
          {"check", "c"},
          {"params", json::object()},
          {"deadline_s", 1},
          {"bind_address", ""}},
         "'step' must be a non-negative integer"},
        {{{"type", "run"},
          {"step", 1.5},
          {"check", "c"},
          {"params", json::object()},
          {"deadline_s", 1},
          {"bind_address", ""}},
         "'step' must be a non-negative integer"},
        {{{"type", "run"},
          {"step", 1},
          {"check", "c"},
          {"params", "x"},
          {"deadline_s", 1},
          {"bind_address", ""}},
         "'params' must be an object"},
        {{{"type", "run"},
          {"step", 1},
          {"check", "c"},
          {"params", json::object()},
          {"deadline_s", 1},
          {"bind_address", ""},
          {"group", "g"}},
         "'group' must be an object"},
        {{{"type", "run"},
          {"step", 1},
          {"check", "c"},
          {"params", json::object()},
          {"deadline_s", 1},
          {"bind_address", ""},
          {"group", {{"id", "g"}, {"rank", "0"}, {"members", {"a"}}}}},
         "'group.rank' must be an integer"},
        {{{"type", "result"}, {"step", 1}, {"result", "pass"}}, "'result' must be an object"},
        {{{"type", "result"}, {"step", 1}, {"result", {{"verdict", "great"}}}}, "'result'"},
        {{{"type", "result"},
          {"step", 1},
          {"result", {{"verdict", "pass"}, {"metrics", {{"x", "1"}}}}}},
         "'result'"},
        {{{"type", "kv_get"}, {"request", 1}, {"key", "k"}, {"timeout_s", true}},
         "'timeout_s' must be a number"},
        {{{"type", "kv_value"}, {"request", 1}, {"key", "k"}, {"error", ""}, {"value", 3}},
         "'value' must be a string or null"},
    };
    for (auto& c : cases) {
        c.message["v"] = k_protocol_version;
        EXPECT_THAT(parse_error(c.message), HasSubstr(c.field)) << c.message.dump();
    }
}

TEST(Protocol, GroupRankOutOfRange) {
    json run = {{"v", k_protocol_version},  {"type", "run"},   {"step", 1},         {"check", "c"},
                {"params", json::object()}, {"deadline_s", 1}, {"bind_address", ""}};
    for (int rank : {-1, 2, 3}) {
        run["group"] = {{"id", "g"}, {"rank", rank}, {"members", {"a", "b"}}};
        EXPECT_THAT(parse_error(run), HasSubstr("'group.rank' is out of range")) << rank;
    }
    run["group"] = {{"id", "g"}, {"rank", 0}, {"members", json::array()}};
    EXPECT_THAT(parse_error(run), HasSubstr("out of range"));
    run["group"] = {{"id", "g"}, {"rank", 1}, {"members", {"a", "b"}}};
    EXPECT_TRUE(parse_message(run.dump()).ok());
}

TEST(Protocol, GroupRankThatWrapsIntoRangeIsRejected) {
    // 2^32 must not be narrowed to int (0) and accepted.
    auto parsed = parse_message(
        R"({"v":2,"type":"run","step":1,"check":"c","params":{},"deadline_s":1,"bind_address":"",)"
        R"("group":{"id":"g","rank":4294967296,"members":["a","b"]}})");
    EXPECT_FALSE(parsed.ok());
}

TEST(Protocol, DurationsOutOfRangeAreRejectedNamingTheField) {
    json run = {
        {"v", k_protocol_version},  {"type", "run"},       {"step", 1},         {"check", "c"},
        {"params", json::object()}, {"deadline_s", 1e308}, {"bind_address", ""}};
    // 1e308 s is finite JSON; as milliseconds it overflowed the agent's cast.
    EXPECT_EQ(parse_error(run),
              "field 'deadline_s' must be a finite number in [0, 2592000], got 1e+308");
    run["deadline_s"] = -1;
    EXPECT_THAT(parse_error(run), HasSubstr("field 'deadline_s' must be a finite number"));
    run["deadline_s"] = 2592000;
    EXPECT_TRUE(parse_message(run.dump()).ok());
    EXPECT_THAT(parse_error({{"v", k_protocol_version},
                             {"type", "welcome"},
                             {"run_id", "r"},
                             {"heartbeat_s", 1e300}}),
                HasSubstr("field 'heartbeat_s'"));
    EXPECT_THAT(parse_error({{"v", k_protocol_version},
                             {"type", "kv_get"},
                             {"request", 1},
                             {"key", "k"},
                             {"timeout_s", 1e20}}),
                HasSubstr("field 'timeout_s'"));
    // Beyond double's range JSON itself refuses it.
    EXPECT_FALSE(parse_message(R"({"v":2,"type":"run","step":1,"check":"c","params":{},)"
                               R"("deadline_s":1e400,"bind_address":""})")
                     .ok());
}

TEST(Protocol, NonObjectJson) {
    for (const char* text : {"[]", "[1,2]", "\"hello\"", "42", "null", "true"}) {
        auto parsed = parse_message(text);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_THAT(parsed.error().message, HasSubstr("not a JSON object")) << text;
    }
}

TEST(Protocol, MalformedJson) {
    for (const char* text : {"", "{", "{\"v\":1,", "{'v':1}", "{\"v\":1}}", "\xff\xfe", "nul"}) {
        auto parsed = parse_message(text);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_THAT(parsed.error().message, HasSubstr("malformed JSON")) << text;
    }
}

TEST(Protocol, InvalidUtf8InDetailSerializesWithoutThrowing) {
    msg::StepResult result;
    result.step = 1;
    result.result.check = "link.netdev";
    result.result.verdict = Verdict::fail;
    result.result.detail = std::string("eth0 \xff\xfe broken \xc3");
    std::string text;
    ASSERT_NO_THROW(text = serialize(result));
    auto parsed = parse_message(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const auto& detail = std::get<msg::StepResult>(*parsed).result.detail;
    EXPECT_THAT(detail, HasSubstr("eth0"));
    EXPECT_THAT(detail, HasSubstr("broken"));

    msg::Reject reject{std::string("bad \x80 node")};
    ASSERT_NO_THROW(text = serialize(reject));
    EXPECT_TRUE(parse_message(text).ok());
}

TEST(Protocol, NonFiniteMetricsAreLeftOut) {
    msg::StepResult result;
    result.result.check = "collective.gloo_allreduce";
    result.result.verdict = Verdict::pass;
    result.result.metrics = {{"busbw_gbps", std::numeric_limits<double>::quiet_NaN()}, {"ok", 1.0}};
    auto parsed = std::get<msg::StepResult>(parse_ok(serialize(result)));
    EXPECT_EQ(parsed.result.metrics.count("busbw_gbps"), 0u);
    EXPECT_EQ(parsed.result.metrics.count("ok"), 1u);
}

TEST(Protocol, ExtraFieldsAreIgnored) {
    auto parsed = parse_message(R"({"v":2,"type":"heartbeat","extra":[1,2,3]})");
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(std::holds_alternative<msg::Heartbeat>(*parsed));
}

// The heartbeat's fast path (no JSON parse) takes only the exact bytes serialize() writes; any
// other spelling goes through the parser and its checks.
TEST(Protocol, HeartbeatFastPathIsExactBytesOnly) {
    const auto canonical = serialize(msg::Heartbeat{});
    EXPECT_EQ(canonical, R"({"type":"heartbeat","v":2})");
    EXPECT_TRUE(std::holds_alternative<msg::Heartbeat>(parse_ok(canonical)));
    EXPECT_TRUE(std::holds_alternative<msg::Heartbeat>(parse_ok(R"({"v":2, "type":"heartbeat"})")));
    auto old = parse_message(R"({"type":"heartbeat","v":1})");
    ASSERT_FALSE(old.ok());
    EXPECT_NE(old.error().message.find("unsupported protocol version 1"), std::string::npos);
    EXPECT_FALSE(parse_message(R"({"type":"heartbeat","v":2}x)").ok());
}

// Both ends skip a heartbeat to a peer they sent a frame in the last half interval (any frame is a
// sign of life; the silence limit is 3 intervals, so the longest silence stays 1.5).
TEST(Heartbeat, DueOnlyHalfAnIntervalAfterTheLastFrame) {
    using namespace std::chrono_literals;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(heartbeat_due(t0, t0, 2s));
    EXPECT_FALSE(heartbeat_due(t0, t0 + 999ms, 2s));
    EXPECT_TRUE(heartbeat_due(t0, t0 + 1s, 2s));
    EXPECT_TRUE(heartbeat_due(std::chrono::steady_clock::time_point{}, t0, 2s));  // never sent
}

// Found by fuzz/protocol_fuzz: 200k nested brackets in a hello's inventory overflowed the stack in
// the JSON library's recursive copy/dump. Such frames are now rejected before parsing.
TEST(Protocol, DeeplyNestedJsonIsRejectedBeforeParsing) {
    const std::string deep(200000, '[');
    const std::string payload = R"({"v":2,"type":"hello","node":"n1","version":"1",)"
                                R"("capabilities":[],"mac":"AA==","inventory":{"x":)" +
                                deep + std::string(200000, ']') + "}}";
    auto parsed = parse_message(payload);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error().message.find("nested deeper than 32"), std::string::npos);
}

TEST(Protocol, NestingAtTheLimitIsAcceptedAndBracketsInStringsDoNotCount) {
    // The message object is level 1, params level 2: 30 more levels reach exactly 32.
    const std::string inner = std::string(30, '[') + std::string(30, ']');
    const std::string run = R"({"v":2,"type":"run","step":1,"check":"c","deadline_s":1,)"
                            R"("bind_address":"","params":{"x":)" +
                            inner + R"(,"s":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"[[["}})";
    auto parsed = parse_message(run);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const std::string over = R"({"v":2,"type":"run","step":1,"check":"c","deadline_s":1,)"
                             R"("bind_address":"","params":{"x":[)" +
                             inner + "]}}";
    EXPECT_FALSE(parse_message(over).ok());
}

}  // namespace
}  // namespace preflight::core
