#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/config_loader.h"
#include "core/url.h"

namespace switchyard::config {

// Internal to the config loader (config_loader.cc and the config_*.cc files that read its
// sections, config_sections.h): how each of them reads YAML. Not part of the config module's
// interface (that is config_loader.h).

inline constexpr std::string_view kEnvPrefix = "os.environ/";

// Whether a scalar is a whole number too large for 64 bits (out of range, not "not an integer").
bool IsHugeInteger(const YAML::Node& node);

// Walks a YAML document and collects every problem with its line instead of stopping at the
// first one.
class Reader final {
  public:
    Reader(std::string_view file, const EnvLookup& env, std::vector<Problem>& problems);

    void Fail(const YAML::Node& node, std::string message);
    // The name the config was read under (a path, or a description such as "<embedded ...>").
    const std::string& File() const { return file_; }
    // A variable of the environment the config is read in.
    std::optional<std::string> Env(std::string_view name) const { return env_(name); }
    void FailAt(int line, std::string message);
    std::size_t ProblemCount() const;

    // True if `node` is a map whose keys are all in `allowed`; reports each unknown key.
    bool CheckMap(const YAML::Node& node, std::string_view where,
                  std::initializer_list<std::string_view> allowed);

    // A name that reaches headers, logs and URL paths (core::IsSafeName).
    bool Name(const YAML::Node& map, const char* key, std::string& out, bool required = false);

    bool String(const YAML::Node& map, const char* key, std::string& out, bool required = false);

    // The value `node` of `key` as a string; false (reported) when it is not a scalar.
    bool StringAt(const YAML::Node& node, std::string_view key, std::string& out);

    template <class Int>
    void Integer(const YAML::Node& map, const char* key, Int& out, long long min, long long max) {
        IntegerAt(map[key], key, out, min, max);
    }

    // The value `node` of `key` (absent or null: `out` is left alone) as an integer in
    // [min, max]; `out` holds it only when it is one.
    template <class Int>
    void IntegerAt(const YAML::Node& node, std::string_view key, Int& out, long long min,
                   long long max) {
        if (!node.IsDefined() || node.IsNull()) return;
        long long value = 0;
        try {
            value = node.as<long long>();
        } catch (const YAML::Exception&) {
            Fail(node, node.IsScalar() && IsHugeInteger(node)
                           ? fmt::format("'{}' must be between {} and {}", key, min, max)
                           : fmt::format("'{}' must be an integer", key));
            return;
        }
        if (value < min || value > max) {
            Fail(node, fmt::format("'{}' must be between {} and {}", key, min, max));
            return;
        }
        out = static_cast<Int>(value);
    }

    void Bool(const YAML::Node& map, const char* key, bool& out);

    void Duration(const YAML::Node& map, const char* key, Millis& out, long long min = 1);

    // Any finite number; false when absent or not one. YAML's .inf and .nan are numbers to
    // yaml-cpp, but no setting means anything by them.
    bool Real(const YAML::Node& map, const char* key, double& out);

    // A number greater than 0 (or at least 0 with `allow_zero`).
    void Number(const YAML::Node& map, const char* key, double& out, bool allow_zero = false);

    // `os.environ/NAME` reads the environment; anything else is an inline value.
    bool SecretValue(const YAML::Node& map, const char* key, Secret& out);

    // The value `node` of `key` as a secret; false (reported) when it cannot be one.
    bool SecretAt(const YAML::Node& node, std::string_view key, Secret& out);

    // False (reported) when `value`, bound for an outgoing request header (upstream or
    // collector), holds a control character. `field` names the setting
    // ("models[0].deployments[1].api_key"); the value is never shown, as it is usually a secret,
    // but where it came from is.
    bool HeaderValue(const YAML::Node& at, std::string_view field, std::string_view value,
                     std::string_view origin = "inline");

    // A base URL (api_base, webhook_url, otlp_endpoint) read from `key`: its host becomes a Host
    // header and its path the start of a request line, both as written, so it must be visible
    // ASCII (as RFC 3986 has it) before it is parsed. nullopt (reported) otherwise.
    std::optional<core::BaseUrl> Url(const YAML::Node& at, std::string_view field,
                                     std::string_view key, const std::string& text);

  private:
    std::string file_;
    const EnvLookup& env_;
    std::vector<Problem>& problems_;
};

// A list of model group names under `key`.
void ReadGroupList(Reader& r, const YAML::Node& node, const char* key,
                   std::vector<std::string>& out);

// A list of region names (a residency constraint).
void ReadRegionList(Reader& r, const YAML::Node& node, const char* key,
                    std::vector<std::string>& out);

}  // namespace switchyard::config
