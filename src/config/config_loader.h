#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace switchyard::config {

// One thing wrong with a config file, at a line (1-based; 0 when the whole file is meant).
struct Problem {
    std::string file;
    int line = 0;
    std::string message;
    std::string ToString() const;  // "file:line: message"
};

struct LoadResult {
    std::shared_ptr<const Config> config;  // null when problems is non-empty
    std::vector<Problem> problems;
};

// Looks up an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;
EnvLookup ProcessEnvironment();

// Parses and validates YAML text. Every problem found is reported, not just the first.
// `file` names the source in problems. Never throws, whatever the text: a document past the
// bounds of config/yaml_limits.h (size, aliases expanded, depth) is one problem, and so is any
// failure while reading, so a reload of a bad file is refused rather than fatal.
LoadResult LoadConfigText(std::string_view text, std::string_view file, const EnvLookup& env);
// The same for a file, read no further than kMaxConfigBytes.
LoadResult LoadConfigFile(const std::string& path, const EnvLookup& env);

// The config compiled into the binary (examples/quickstart.yaml).
std::string_view EmbeddedDefaultConfig();

}  // namespace switchyard::config
