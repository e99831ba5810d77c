#include "core/json_yaml.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

#include <yaml-cpp/yaml.h>

namespace preflight::core {
namespace {

// Whether a plain scalar with this text would be read back as something other than a string
// (YAML 1.1 and 1.2 readers alike: numbers, booleans, null).
bool reads_as_other_type(const std::string& text) {
    if (text.empty()) {
        return true;
    }
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static const std::array<const char*, 12> k_words = {
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", ".nan"};
    if (std::find(k_words.begin(), k_words.end(), lower) != k_words.end()) {
        return true;
    }
    char* end = nullptr;
    (void)std::strtod(text.c_str(), &end);
    return end != nullptr && *end == '\0' && end != text.c_str();
}

void emit(YAML::Emitter& out, const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::object:
            out << YAML::BeginMap;
            for (const auto& [key, item] : v.items()) {
                out << YAML::Key << key << YAML::Value;
                emit(out, item);
            }
            out << YAML::EndMap;
            break;
        case nlohmann::json::value_t::array:
            out << YAML::BeginSeq;
            for (const auto& item : v) {
                emit(out, item);
            }
            out << YAML::EndSeq;
            break;
        case nlohmann::json::value_t::string: {
            const auto& text = v.get_ref<const std::string&>();
            if (reads_as_other_type(text)) {
                out << YAML::DoubleQuoted;
            }
            out << text;
            break;
        }
        case nlohmann::json::value_t::boolean:
            out << v.get<bool>();
            break;
        case nlohmann::json::value_t::number_integer:
            out << v.get<long long>();
            break;
        case nlohmann::json::value_t::number_unsigned:
            out << v.get<unsigned long long>();
            break;
        case nlohmann::json::value_t::number_float:
            out << v.get<double>();
            break;
        default:
            out << YAML::Null;
            break;
    }
}

}  // namespace

std::string to_yaml(const nlohmann::json& value) {
    YAML::Emitter out;
    out.SetBoolFormat(YAML::TrueFalseBool);
    emit(out, value);
    return std::string(out.c_str()) + "\n";
}

}  // namespace preflight::core
