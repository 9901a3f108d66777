#include "drills/drill_case.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <set>

#include "api/structured_output.h"
#include "core/json.h"

namespace switchyard::drills {
namespace {

namespace json = boost::json;

// A member that is one string or an array of strings, appended to `out`.
std::optional<std::string> ReadStrings(const json::object& expect, std::string_view key,
                                       std::vector<std::string>& out) {
    const json::value* value = expect.if_contains(key);
    if (value == nullptr) return std::nullopt;
    if (value->is_string()) {
        out.emplace_back(value->get_string());
        return std::nullopt;
    }
    if (value->is_array() && !value->get_array().empty()) {
        for (const json::value& item : value->get_array()) {
            if (!item.is_string()) break;
            out.emplace_back(item.get_string());
        }
        if (out.size() == value->get_array().size()) return std::nullopt;
    }
    return fmt::format("expect.{} must be a string or a non-empty array of strings", key);
}

std::optional<std::string> ReadLimit(const json::object& expect, std::string_view key,
                                     std::optional<double>& out) {
    const json::value* value = expect.if_contains(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number() || value->to_number<double>() < 0) {
        return fmt::format("expect.{} must be a number >= 0", key);
    }
    out = value->to_number<double>();
    return std::nullopt;
}

std::variant<Expectation, std::string> ReadExpectation(const json::object& expect) {
    static const std::set<std::string_view> kKnown = {"contains",    "not_contains",   "regex",
                                                      "json_schema", "max_latency_ms", "max_cost"};
    for (const auto& member : expect) {
        if (!kKnown.contains(member.key())) {
            return fmt::format(
                "unknown expectation '{}' (contains, not_contains, regex, json_schema, "
                "max_latency_ms, max_cost)",
                std::string_view(member.key()));
        }
    }
    Expectation out;
    if (auto problem = ReadStrings(expect, "contains", out.contains)) return *problem;
    if (auto problem = ReadStrings(expect, "not_contains", out.not_contains)) return *problem;
    std::vector<std::string> patterns;
    if (auto problem = ReadStrings(expect, "regex", patterns)) return *problem;
    for (const std::string& pattern : patterns) {
        auto compiled = answers::SchemaPattern::Compile(pattern);
        if (auto* problem = std::get_if<std::string>(&compiled)) {
            return fmt::format("expect.regex '{}' cannot be run: {}", pattern, *problem);
        }
        out.regex.push_back(
            std::move(std::get<std::unique_ptr<const answers::SchemaPattern>>(compiled)));
    }
    if (const json::value* schema = expect.if_contains("json_schema")) {
        auto compiled = answers::OutputSchema::Compile(*schema);
        if (auto* problem = std::get_if<std::string>(&compiled)) {
            return "expect.json_schema cannot be checked: " + *problem;
        }
        out.json_schema = std::get<std::shared_ptr<const answers::OutputSchema>>(compiled);
    }
    if (auto problem = ReadLimit(expect, "max_latency_ms", out.max_latency_ms)) return *problem;
    if (auto problem = ReadLimit(expect, "max_cost", out.max_cost)) return *problem;
    return out;
}

std::optional<api::Wire> WireNamed(std::string_view name) {
    if (name == "chat") return api::Wire::kOpenAi;
    if (name == "messages") return api::Wire::kAnthropic;
    if (name == "responses") return api::Wire::kResponses;
    return std::nullopt;
}

}  // namespace

std::string_view ApiName(api::Wire wire) {
    switch (wire) {
        case api::Wire::kOpenAi:
            return "chat";
        case api::Wire::kAnthropic:
            return "messages";
        case api::Wire::kResponses:
            return "responses";
    }
    return "chat";
}

std::variant<DrillCase, std::string> ParseCase(std::string_view line, std::string_view model) {
    boost::system::error_code ec;
    json::value parsed = core::ParseJson(line, ec);
    if (ec || !parsed.is_object()) return std::string("a case must be one JSON object");
    json::object& object = parsed.get_object();
    for (const auto& member : object) {
        const std::string_view key = member.key();
        if (key != "id" && key != "request" && key != "expect" && key != "api") {
            return fmt::format("unknown member '{}' (id, request, expect, api)", key);
        }
    }
    DrillCase out;
    const json::value* id = object.if_contains("id");
    if (id == nullptr || !id->is_string() || id->get_string().empty()) {
        return std::string("'id' must be a non-empty string");
    }
    out.id = id->get_string();
    json::value* request = object.if_contains("request");
    if (request == nullptr || !request->is_object()) {
        return std::string("'request' must be an object (a chat, messages or responses body)");
    }
    json::object& body = request->get_object();
    if (const json::value* api = object.if_contains("api")) {
        const auto wire = api->is_string() ? WireNamed(api->get_string()) : std::nullopt;
        if (!wire) return std::string("'api' must be \"chat\", \"messages\" or \"responses\"");
        out.wire = *wire;
    } else {
        out.wire = body.contains("input") && !body.contains("messages") ? api::Wire::kResponses
                                                                        : api::Wire::kOpenAi;
    }
    if (const auto schema = api::RequestedSchema(body, out.wire)) {
        auto compiled = answers::OutputSchema::Compile(*schema);
        if (auto* usable = std::get_if<std::shared_ptr<const answers::OutputSchema>>(&compiled)) {
            out.requested_schema = std::move(*usable);
        }
    }
    for (const std::string_view key :
         {"max_completion_tokens", "max_tokens", "max_output_tokens"}) {
        const json::value* limit = body.if_contains(key);
        if (limit != nullptr && limit->is_int64() && limit->get_int64() > 0) {
            out.max_tokens = limit->get_int64();
            break;
        }
    }
    body["model"] = model;
    body.erase("stream");
    body.erase("stream_options");
    out.body = json::serialize(body);
    if (const json::value* expect = object.if_contains("expect")) {
        if (!expect->is_object()) return std::string("'expect' must be an object");
        auto read = ReadExpectation(expect->get_object());
        if (auto* problem = std::get_if<std::string>(&read)) return *problem;
        out.expect = std::move(std::get<Expectation>(read));
    }
    return out;
}

CaseFile ParseCases(std::string_view text, std::string_view model) {
    CaseFile out;
    std::set<std::string> ids;
    int number = 0;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        ++number;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        auto parsed = ParseCase(line, model);
        if (auto* problem = std::get_if<std::string>(&parsed)) {
            out.problems.push_back(fmt::format("line {}: {}", number, *problem));
            continue;
        }
        DrillCase& drill_case = std::get<DrillCase>(parsed);
        if (!ids.insert(drill_case.id).second) {
            out.problems.push_back(
                fmt::format("line {}: the id '{}' is used twice", number, drill_case.id));
            continue;
        }
        out.cases.push_back(std::move(drill_case));
    }
    if (out.cases.empty() && out.problems.empty()) out.problems.emplace_back("no cases");
    if (!out.problems.empty()) out.cases.clear();
    return out;
}

std::vector<std::string> Unmet(const Expectation& expect, const Observed& observed) {
    std::vector<std::string> out;
    const bool checks_text = !expect.contains.empty() || !expect.not_contains.empty() ||
                             !expect.regex.empty() || expect.json_schema != nullptr;
    if (checks_text && !observed.text) {
        out.emplace_back("the answer has no text (a tool call or a refusal)");
    }
    const std::string_view text = observed.text ? std::string_view(*observed.text) : "";
    if (observed.text) {
        for (const std::string& wanted : expect.contains) {
            if (text.find(wanted) == std::string_view::npos) {
                out.push_back(fmt::format("does not contain \"{}\"", wanted));
            }
        }
        for (const std::string& unwanted : expect.not_contains) {
            if (text.find(unwanted) != std::string_view::npos) {
                out.push_back(fmt::format("contains \"{}\"", unwanted));
            }
        }
        for (const auto& pattern : expect.regex) {
            const auto found = pattern->Find(text);
            if (found == answers::SchemaPattern::Found::kNo) {
                out.push_back(fmt::format("does not match /{}/", pattern->source()));
            } else if (found == answers::SchemaPattern::Found::kOutOfMemory) {
                out.push_back(fmt::format("/{}/ could not be run on it", pattern->source()));
            }
        }
        if (expect.json_schema != nullptr) {
            const answers::SchemaVerdict verdict = expect.json_schema->Check(text);
            if (verdict.result == answers::SchemaVerdict::Result::kFailed) {
                out.push_back("does not match the JSON schema: " + verdict.problem);
            } else if (verdict.result == answers::SchemaVerdict::Result::kSkipped) {
                out.push_back("could not be checked against the JSON schema: " + verdict.problem);
            }
        }
    }
    if (expect.max_latency_ms && observed.latency_ms > *expect.max_latency_ms) {
        out.push_back(fmt::format("took {:.0f} ms, more than {:.0f}", observed.latency_ms,
                                  *expect.max_latency_ms));
    }
    if (expect.max_cost) {
        if (!observed.cost) {
            out.emplace_back("its cost is unknown (no usage reported)");
        } else if (*observed.cost > *expect.max_cost) {
            out.push_back(
                fmt::format("cost ${:.6f}, more than ${:.6f}", *observed.cost, *expect.max_cost));
        }
    }
    return out;
}

}  // namespace switchyard::drills
