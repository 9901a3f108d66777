#include "config/yaml_reading.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "core/names.h"
#include "core/url.h"

// The YAML reading every section of a config shares (yaml_reading.h): the Reader, which collects
// each problem with its line, and the lists of names.

namespace switchyard::config {
namespace {

// RFC 9110 section 5.5: a field value never holds CR, LF or NUL (a CR or LF ends the field, and
// what follows would go out as a header of its own), and its grammar has no other control
// character (HTAB aside, which no setting here needs).
bool HasControlCharacter(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte == 0x7f;
    });
}

bool IsVisibleAscii(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// A list of names under `key` (`what` says what they are, e.g. "model group names"), each
// checked by `valid`.
void ReadNameList(Reader& r, const YAML::Node& node, const char* key, std::string_view what,
                  const std::function<bool(const std::string&)>& valid,
                  std::vector<std::string>& out) {
    const YAML::Node list = node[key];
    if (!list.IsDefined() || list.IsNull()) return;
    if (!list.IsSequence()) {
        r.Fail(list, std::string("'") + key + "' must be a list of " + std::string(what));
        return;
    }
    for (const auto& item : list) {
        if (!item.IsScalar() || !valid(item.Scalar())) {
            r.Fail(item, std::string("'") + key + "' entries must be " + std::string(what));
            continue;
        }
        out.push_back(item.Scalar());
    }
}

}  // namespace

bool IsHugeInteger(const YAML::Node& node) {
    try {
        const double value = node.as<double>();
        return std::isfinite(value) && std::floor(value) == value && std::fabs(value) >= 9.2e18;
    } catch (const YAML::Exception&) {
        return false;
    }
}

Reader::Reader(std::string_view file, const EnvLookup& env, std::vector<Problem>& problems)
    : file_(file), env_(env), problems_(problems) {}

void Reader::Fail(const YAML::Node& node, std::string message) {
    const int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    FailAt(line, std::move(message));
}

void Reader::FailAt(int line, std::string message) {
    problems_.push_back({file_, line, std::move(message)});
}

std::size_t Reader::ProblemCount() const { return problems_.size(); }

bool Reader::CheckMap(const YAML::Node& node, std::string_view where,
                      std::initializer_list<std::string_view> allowed) {
    if (!node.IsMap()) {
        Fail(node, std::string(where) + " must be a mapping");
        return false;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
        const std::string key = entry.first.Scalar();
        if (!seen.insert(key).second) {
            // YAML would keep one of them silently; a config that says two things is wrong.
            Fail(entry.first, "duplicate key '" + key + "' in " + std::string(where));
            continue;
        }
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            std::string known;
            for (std::string_view k : allowed) {
                if (!known.empty()) known += ", ";
                known += k;
            }
            Fail(entry.first,
                 "unknown key '" + key + "' in " + std::string(where) + " (known: " + known + ")");
        }
    }
    return true;
}

bool Reader::Name(const YAML::Node& map, const char* key, std::string& out, bool required) {
    if (!String(map, key, out, required)) return false;
    if (core::IsSafeName(out)) return true;
    Fail(map[key], std::string("'") + key + "' must be 1 to " +
                       std::to_string(core::kMaxNameLength) +
                       " visible ASCII characters without spaces, quotes or backslashes");
    out.clear();
    return false;
}

bool Reader::String(const YAML::Node& map, const char* key, std::string& out, bool required) {
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) {
        if (required) Fail(map, std::string("missing required key '") + key + "'");
        return false;
    }
    return StringAt(node, key, out);
}

bool Reader::StringAt(const YAML::Node& node, std::string_view key, std::string& out) {
    if (!node.IsScalar()) {
        Fail(node, fmt::format("'{}' must be a string", key));
        return false;
    }
    out = node.Scalar();
    return true;
}

void Reader::Bool(const YAML::Node& map, const char* key, bool& out) {
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) return;
    if (!node.IsScalar() || (node.Scalar() != "true" && node.Scalar() != "false")) {
        Fail(node, std::string("'") + key + "' must be true or false");
        return;
    }
    out = node.Scalar() == "true";
}

void Reader::Duration(const YAML::Node& map, const char* key, Millis& out, long long min) {
    long long ms = out.count();
    Integer(map, key, ms, min, 24LL * 3600 * 1000);
    out = Millis(ms);
}

bool Reader::Real(const YAML::Node& map, const char* key, double& out) {
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) return false;
    double value = 0;
    try {
        value = node.as<double>();
    } catch (const YAML::Exception&) {
        Fail(node, std::string("'") + key + "' must be a number");
        return false;
    }
    if (!std::isfinite(value)) {
        Fail(node, std::string("'") + key + "' must be a finite number");
        return false;
    }
    out = value;
    return true;
}

void Reader::Number(const YAML::Node& map, const char* key, double& out, bool allow_zero) {
    if (!Real(map, key, out)) return;
    const YAML::Node node = map[key];
    if (allow_zero ? !(out >= 0) : !(out > 0)) {
        Fail(node, std::string("'") + key + "' must be " +
                       (allow_zero ? "at least 0" : "greater than 0"));
    }
}

bool Reader::SecretValue(const YAML::Node& map, const char* key, Secret& out) {
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) return false;
    return SecretAt(node, key, out);
}

bool Reader::SecretAt(const YAML::Node& node, std::string_view key, Secret& out) {
    std::string text;
    if (!StringAt(node, key, text)) return false;
    if (!std::string_view(text).starts_with(kEnvPrefix)) {
        out = Secret(text, "inline");
        return true;
    }
    const std::string name = text.substr(kEnvPrefix.size());
    const std::optional<std::string> value = env_(name);
    if (!value || value->empty()) {
        Fail(node, fmt::format("'{}': environment variable {} is not set", key, name));
        return false;
    }
    out = Secret(*value, "env " + name);
    return true;
}

bool Reader::HeaderValue(const YAML::Node& at, std::string_view field, std::string_view value,
                         std::string_view origin) {
    if (!HasControlCharacter(value)) return true;
    const std::string from = origin.starts_with("env ")
                                 ? fmt::format(" (environment variable {})", origin.substr(4))
                                 : std::string();
    Fail(at, fmt::format("{}{}: contains a control character (CR, LF or another); header "
                         "values cannot carry it",
                         field, from));
    return false;
}

std::optional<core::BaseUrl> Reader::Url(const YAML::Node& at, std::string_view field,
                                         std::string_view key, const std::string& text) {
    if (!IsVisibleAscii(text)) {
        Fail(at, fmt::format("{}: contains a space, a control character or a non-ASCII byte; "
                             "a URL here must be visible ASCII (percent-encode the rest)",
                             field));
        return std::nullopt;
    }
    std::string error;
    auto url = core::ParseBaseUrl(text, error);
    // Not shown: a URL may carry a secret (a webhook's token, credentials refused here).
    if (!url) Fail(at, fmt::format("invalid {}: {}", key, error));
    return url;
}

void ReadGroupList(Reader& r, const YAML::Node& node, const char* key,
                   std::vector<std::string>& out) {
    ReadNameList(
        r, node, key, "model group names", [](const std::string&) { return true; }, out);
}

void ReadRegionList(Reader& r, const YAML::Node& node, const char* key,
                    std::vector<std::string>& out) {
    ReadNameList(
        r, node, key, "regions: 1 to 32 lowercase letters, digits or '-'",
        [](const std::string& name) { return core::IsRegionName(name); }, out);
}

}  // namespace switchyard::config
