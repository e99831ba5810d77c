// `preflight inspect`: option typing, reading the files, and how a judgement is printed (the
// reader table is readers.cpp).
#include "plugins/inspect/inspect.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace preflight::plugins::inspect {

namespace {

std::string flag(const std::string& name) {
    std::string out = "--" + name;
    for (auto& c : out) {
        c = c == '_' ? '-' : c;
    }
    return out;
}

// The value of one option as its spec types it.
core::Result<nlohmann::json> typed(const core::ParamSpec& spec, const std::string& text) {
    const std::string bad =
        flag(spec.name) + ": '" + text + "' is not " + std::string(core::describe_type(spec.type));
    switch (spec.type) {
        case core::ParamType::integer: {
            long long v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
                return core::Error{bad};
            }
            return nlohmann::json(v);
        }
        case core::ParamType::number: {
            // strtod, not from_chars: g++ 12's from_chars for double is fine, but "1e3" and
            // "0.5" must both read, and nothing after the number may be left.
            char* end = nullptr;
            errno = 0;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || errno != 0 ||
                !std::isfinite(v)) {
                return core::Error{bad};
            }
            return nlohmann::json(v);
        }
        case core::ParamType::boolean:
            if (text == "true" || text == "false") {
                return nlohmann::json(text == "true");
            }
            return core::Error{bad + " (true or false)"};
        case core::ParamType::string:
            return nlohmann::json(text);
        case core::ParamType::string_list: {
            nlohmann::json list = nlohmann::json::array();
            std::stringstream in(text);
            for (std::string item; std::getline(in, item, ',');) {
                if (!item.empty()) {
                    list.push_back(item);
                }
            }
            return list;
        }
    }
    return core::Error{bad};
}

core::Result<std::string> read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return core::Error{"cannot open " + path + ": " + std::strerror(errno)};
    }
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > k_max_input) {
            return core::Error{path + ": larger than " + std::to_string(k_max_input >> 20) +
                               " MiB"};
        }
    }
    if (in.bad()) {
        return core::Error{"cannot read " + path};
    }
    return text;
}

}  // namespace

const Reader* find_reader(std::string_view kind) {
    for (const auto& r : readers()) {
        if (r.kind == kind) {
            return &r;
        }
    }
    return nullptr;
}

core::Result<nlohmann::json> resolve_options(const std::vector<core::ParamSpec>& specs,
                                             const std::map<std::string, std::string>& given) {
    nlohmann::json typed_options = nlohmann::json::object();
    for (const auto& [name, text] : given) {
        // An init-capture: clang before 16 cannot capture a structured binding.
        const auto spec =
            std::find_if(specs.begin(), specs.end(),
                         [&option = name](const core::ParamSpec& s) { return s.name == option; });
        if (spec == specs.end()) {
            return core::Error{"unknown option " + flag(name)};
        }
        auto value = typed(*spec, text);
        if (!value) {
            return value.error();
        }
        typed_options[name] = std::move(*value);
    }
    auto resolved = core::resolve_params(specs, typed_options);
    if (!resolved) {
        // resolve_params speaks of parameters; here they are options.
        std::string message = resolved.error().message;
        for (const auto& spec : specs) {
            const std::string quoted = "parameter '" + spec.name + "'";
            if (auto at = message.find(quoted); at != std::string::npos) {
                message.replace(at, quoted.size(), "option " + flag(spec.name));
            }
        }
        return core::Error{message};
    }
    return resolved;
}

core::Result<Inspection> inspect_files(const Reader& reader, const std::vector<std::string>& paths,
                                       const nlohmann::json& options) {
    std::vector<Input> inputs;
    for (const auto& path : paths) {
        auto text = read_whole(path);
        if (!text) {
            return text.error();
        }
        inputs.push_back({path, std::move(*text)});
    }
    auto inspection = reader.judge(inputs, options);
    if (inspection) {
        inspection->kind = std::string(reader.kind);
        inspection->inputs = paths;
        inspection->result.check = std::string(reader.check);
    }
    return inspection;
}

std::string render_text(const Inspection& in) {
    std::ostringstream out;
    std::string verdict(core::to_string(in.result.verdict));
    for (auto& c : verdict) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    out << in.kind << ": " << verdict;
    if (in.result.undecided != core::Undecided::none) {
        out << " (" << core::to_string(in.result.undecided) << ")";
    }
    out << "  [" << in.result.check << " judgement]\n";
    out << "  " << in.result.detail << "\n";
    for (const auto& [name, value] : in.result.metrics) {
        out << "  " << name << " = " << value << "\n";
    }
    if (!in.read.empty()) {
        out << "read:\n";
        for (const auto& line : in.read) {
            out << "  " << line << "\n";
        }
    }
    return out.str();
}

nlohmann::ordered_json to_json(const Inspection& in) {
    nlohmann::ordered_json j;
    j["kind"] = in.kind;
    j["inputs"] = in.inputs;
    j["check"] = in.result.check;
    j["verdict"] = core::to_string(in.result.verdict);
    if (in.result.undecided != core::Undecided::none) {
        j["undecided"] = core::to_string(in.result.undecided);
    }
    j["detail"] = in.result.detail;
    j["metrics"] = nlohmann::ordered_json::object();
    for (const auto& [name, value] : in.result.metrics) {
        j["metrics"][name] = value;
    }
    j["read"] = in.read;
    return j;
}

core::ExitCode exit_code(const Inspection& in) {
    switch (in.result.verdict) {
        case core::Verdict::pass:
            return core::ExitCode::ok;
        case core::Verdict::fail:
            return core::ExitCode::failed;
        case core::Verdict::warn:
            return in.result.undecided == core::Undecided::none ? core::ExitCode::warnings
                                                                : core::ExitCode::inconclusive;
        case core::Verdict::error:
        case core::Verdict::skip:
            return core::ExitCode::inconclusive;
    }
    return core::ExitCode::inconclusive;
}

}  // namespace preflight::plugins::inspect
