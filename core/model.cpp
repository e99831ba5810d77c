#include "core/model.hpp"

#include <cmath>
#include <stdexcept>

namespace preflight::core {

std::string_view to_string(Verdict v) {
    switch (v) {
        case Verdict::pass:
            return "pass";
        case Verdict::warn:
            return "warn";
        case Verdict::fail:
            return "fail";
        case Verdict::skip:
            return "skip";
        case Verdict::error:
            return "error";
    }
    // Unreachable for valid enumerators; an out-of-range value must not read as a pass.
    return "error";
}

std::optional<Verdict> verdict_from_string(std::string_view s) {
    for (Verdict v : {Verdict::pass, Verdict::warn, Verdict::fail, Verdict::skip, Verdict::error}) {
        if (to_string(v) == s) {
            return v;
        }
    }
    return std::nullopt;
}

int severity(Verdict v) {
    // "error" ranks below "fail": a node measured bad is a stronger statement than one we could not
    // judge, but both outrank warn so that an inconclusive node is never reported as healthy.
    switch (v) {
        case Verdict::fail:
            return 4;
        case Verdict::error:
            return 3;
        case Verdict::warn:
            return 2;
        case Verdict::pass:
            return 1;
        case Verdict::skip:
            return 0;
    }
    return 3;
}

Verdict worst(Verdict a, Verdict b) {
    return severity(b) > severity(a) ? b : a;
}

std::string_view to_string(Undecided u) {
    switch (u) {
        case Undecided::none:
            return "none";
        case Undecided::inconclusive:
            return "inconclusive";
        case Undecided::incomplete:
            return "incomplete";
    }
    return "inconclusive";
}

std::optional<Undecided> undecided_from_string(std::string_view s) {
    for (Undecided u : {Undecided::none, Undecided::inconclusive, Undecided::incomplete}) {
        if (to_string(u) == s) {
            return u;
        }
    }
    return std::nullopt;
}

void to_json(nlohmann::json& j, const CheckResult& r) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [name, value] : r.metrics) {
        // JSON has no NaN/inf (nlohmann would write null, which does not read back as a number);
        // a metric that is not a finite number is left out, i.e. missing, which never passes.
        if (std::isfinite(value)) {
            metrics[name] = value;
        }
    }
    j = nlohmann::json{{"check", r.check},
                       {"verdict", std::string(to_string(r.verdict))},
                       {"metrics", std::move(metrics)},
                       {"detail", r.detail},
                       {"seconds", r.seconds}};
    if (!r.facts.empty()) {
        j["facts"] = r.facts;
    }
}

void from_json(const nlohmann::json& j, CheckResult& r) {
    // verdict is required; the other keys default so that a terse result frame still decodes. Keys
    // that are present must have the right type (json::type_error otherwise).
    CheckResult out;
    const auto verdict_text = j.at("verdict").get<std::string>();
    auto verdict = verdict_from_string(verdict_text);
    if (!verdict) {
        throw std::invalid_argument("unknown verdict '" + verdict_text + "'");
    }
    out.verdict = *verdict;
    if (j.contains("check")) {
        j.at("check").get_to(out.check);
    }
    if (j.contains("metrics")) {
        const auto& metrics = j.at("metrics");
        if (!metrics.is_object()) {
            throw nlohmann::json::type_error::create(
                302, "metrics must be an object, but is " + std::string(metrics.type_name()),
                &metrics);
        }
        for (const auto& [name, value] : metrics.items()) {
            if (!value.is_number()) {
                throw nlohmann::json::type_error::create(302,
                                                         "metric '" + name +
                                                             "' must be a number, but is " +
                                                             std::string(value.type_name()),
                                                         &value);
            }
            out.metrics[name] = value.get<double>();
        }
    }
    if (j.contains("detail")) {
        j.at("detail").get_to(out.detail);
    }
    if (j.contains("seconds")) {
        const auto& seconds = j.at("seconds");
        if (!seconds.is_number()) {
            throw nlohmann::json::type_error::create(
                302, "seconds must be a number, but is " + std::string(seconds.type_name()),
                &seconds);
        }
        out.seconds = seconds.get<double>();
    }
    if (j.contains("facts")) {
        const auto& facts = j.at("facts");
        if (!facts.is_object() || facts.size() > k_max_facts) {
            throw std::invalid_argument("facts must be an object of at most " +
                                        std::to_string(k_max_facts) + " strings");
        }
        for (const auto& [key, value] : facts.items()) {
            if (!value.is_string() || key.size() > k_max_fact_size ||
                value.get_ref<const std::string&>().size() > k_max_fact_size) {
                throw std::invalid_argument("fact '" + key.substr(0, 64) +
                                            "' must be a string of at most " +
                                            std::to_string(k_max_fact_size) + " bytes");
            }
            out.facts[key] = value.get<std::string>();
        }
    }
    r = std::move(out);
}

}  // namespace preflight::core
