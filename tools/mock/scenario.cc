#include "scenario.h"

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace switchyard::mock {
namespace json = boost::json;
namespace {

std::string_view View(const json::string& s) { return {s.data(), s.size()}; }

// Reads optional string `name` of `object` into `out`. Returns an error message or "".
std::string ReadOptionalString(const json::object& object, std::string_view name,
                               std::optional<std::string>& out) {
    const auto it = object.find(json::string_view(name.data(), name.size()));
    if (it == object.end()) return {};
    const auto* s = it->value().if_string();
    if (s == nullptr) return fmt::format("{} must be a string", name);
    out.emplace(View(*s));
    return {};
}

std::string ParseMatch(const json::value& value, ScenarioRule& rule) {
    const auto* match = value.if_object();
    if (match == nullptr) return "match must be an object";
    for (const auto& field : *match) {
        if (field.key() != "model" && field.key() != "path") {
            return fmt::format("unknown match field '{}'", std::string_view(field.key()));
        }
    }
    if (auto error = ReadOptionalString(*match, "model", rule.model); !error.empty()) {
        return "match." + error;
    }
    if (auto error = ReadOptionalString(*match, "path", rule.path); !error.empty()) {
        return "match." + error;
    }
    return {};
}

std::string ParseRule(const json::value& value, ScenarioRule& rule) {
    const auto* object = value.if_object();
    if (object == nullptr) return "must be an object";
    bool has_fault = false;
    for (const auto& field : *object) {
        const std::string_view key = field.key();
        if (key == "match") {
            if (auto error = ParseMatch(field.value(), rule); !error.empty()) return error;
        } else if (key == "fault") {
            const auto* text = field.value().if_string();
            if (text == nullptr) return "fault must be a string";
            rule.fault_text.assign(text->data(), text->size());
            auto parsed = ParseFaultSpec(rule.fault_text);
            if (!parsed.ok()) return "fault: " + parsed.error;
            rule.fault = parsed.spec;
            has_fault = true;
        } else if (key == "times") {
            const auto& times = field.value();
            if (times.is_uint64()) {
                rule.times = times.get_uint64();
            } else if (times.is_int64() && times.get_int64() >= 0) {
                rule.times = static_cast<std::uint64_t>(times.get_int64());
            } else {
                return "times must be a non-negative integer";
            }
        } else {
            return fmt::format("unknown field '{}'", key);
        }
    }
    if (!has_fault) return "fault is required";
    return {};
}

}  // namespace

Scenario::Scenario(std::vector<ScenarioRule> rules)
    : rules_(std::move(rules)), matches_(new std::atomic<std::uint64_t>[rules_.size()]) {
    for (std::size_t i = 0; i < rules_.size(); ++i) matches_[i].store(0);
}

const ScenarioRule* Scenario::Match(std::string_view model, std::string_view path,
                                    RuleScope scope) const {
    for (std::size_t i = 0; i < rules_.size(); ++i) {
        const auto& rule = rules_[i];
        if (rule.fault.batch != (scope == RuleScope::kBatch)) continue;
        if (rule.model && *rule.model != model) continue;
        if (rule.path && *rule.path != path) continue;
        if (rule.times) {
            // Load first so that an exhausted rule's counter stops growing.
            if (matches_[i].load(std::memory_order_relaxed) >= *rule.times) continue;
            if (matches_[i].fetch_add(1, std::memory_order_relaxed) >= *rule.times) continue;
        }
        return &rule;
    }
    return nullptr;
}

ParsedScenario ParseScenario(std::string_view json_text) {
    ParsedScenario result;
    boost::system::error_code ec;
    const json::value root = json::parse(json::string_view(json_text.data(), json_text.size()), ec);
    if (ec) {
        result.error = fmt::format("scenario is not valid JSON: {}", ec.message());
        return result;
    }
    const auto* object = root.if_object();
    if (object == nullptr) {
        result.error = "scenario must be a JSON object";
        return result;
    }
    for (const auto& field : *object) {
        if (field.key() != "rules") {
            result.error =
                fmt::format("unknown scenario field '{}'", std::string_view(field.key()));
            return result;
        }
    }
    const auto rules_it = object->find("rules");
    if (rules_it == object->end() || !rules_it->value().is_array()) {
        result.error = "scenario must have a \"rules\" array";
        return result;
    }
    std::vector<ScenarioRule> rules;
    const auto& rule_values = rules_it->value().get_array();
    rules.reserve(rule_values.size());
    for (std::size_t i = 0; i < rule_values.size(); ++i) {
        ScenarioRule rule;
        if (auto error = ParseRule(rule_values[i], rule); !error.empty()) {
            result.error = fmt::format("rules[{}]: {}", i, error);
            return result;
        }
        rules.push_back(std::move(rule));
    }
    result.scenario = std::make_shared<const Scenario>(std::move(rules));
    return result;
}

std::shared_ptr<const Scenario> ScenarioStore::Get() const {
    std::lock_guard lock(mutex_);
    return scenario_;
}

void ScenarioStore::Set(std::shared_ptr<const Scenario> scenario) {
    std::lock_guard lock(mutex_);
    scenario_ = std::move(scenario);
}

}  // namespace switchyard::mock
