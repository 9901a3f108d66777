#include "config/config_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "config/config_sections.h"
#include "config/yaml_limits.h"
#include "config/yaml_reading.h"

// Reading a config: the entry points (config_loader.h), which hand each section to its reader
// (config_sections.h).

namespace switchyard::config {

std::string Problem::ToString() const { return file + ":" + std::to_string(line) + ": " + message; }

EnvLookup ProcessEnvironment() {
    return [](std::string_view name) -> std::optional<std::string> {
        const char* value = std::getenv(std::string(name).c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    };
}

namespace {

// LoadConfigText without its guard: may throw (yaml-cpp on a node shape no reader expected,
// std::bad_alloc), which its caller turns into a problem.
void Load(std::string_view text, std::string_view file, const EnvLookup& env, LoadResult& result) {
    if (text.size() > kMaxConfigBytes) {
        result.problems.push_back(
            {std::string(file), 0, fmt::format("larger than {} MiB", kMaxConfigBytes >> 20)});
        return;
    }
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        result.problems.push_back({std::string(file), e.mark.line + 1, e.msg});
        return;
    }
    // Before any reader walks it: a few aliases must not become a billion nodes to read.
    if (const std::optional<YamlOverflow> overflow = CheckYamlExpansion(root)) {
        result.problems.push_back({std::string(file), overflow->line, overflow->ToString()});
        return;
    }
    auto config = std::make_shared<Config>();
    Reader r(file, env, result.problems);
    if (!r.CheckMap(
            root, "the top level",
            {"server", "timeouts", "log", "retry", "health", "alerts", "degradation", "idempotency",
             "limits", "state", "telemetry", "keys", "models", "batches", "drills"})) {
        return;
    }
    if (root["server"]) ReadServer(r, root["server"], config->server);
    if (root["timeouts"]) ReadTimeouts(r, root["timeouts"], config->timeouts);
    if (root["log"]) ReadLog(r, root["log"], config->log);
    if (root["retry"]) ReadRetry(r, root["retry"], config->retry);
    if (root["health"]) ReadHealth(r, root["health"], config->health);
    if (root["alerts"]) ReadAlerts(r, root["alerts"], config->alerts);
    ReadState(r, root["state"], config->state);  // its defaults read the environment
    if (root["telemetry"]) ReadTelemetry(r, root["telemetry"], config->telemetry);
    if (root["degradation"]) ReadDegradation(r, root["degradation"], config->degradation);
    if (root["idempotency"]) ReadIdempotency(r, root["idempotency"], config->idempotency);
    if (root["batches"]) ReadBatches(r, root["batches"], config->batches);
    if (root["models"]) {
        ReadModels(r, root["models"], config->models);
    } else {
        r.Fail(root, "missing required key 'models'");
    }
    LinkModels(r, root, *config);
    if (root["limits"]) ReadLimits(r, root["limits"], config->limits);
    if (root["keys"]) ReadKeys(r, root["keys"], *config);
    if (root["drills"]) ReadDrills(r, root["drills"], *config);
    if (result.problems.empty()) result.config = std::move(config);
}

}  // namespace

LoadResult LoadConfigText(std::string_view text, std::string_view file, const EnvLookup& env) {
    LoadResult result;
    try {
        Load(text, file, env, result);
    } catch (const std::exception& e) {
        // Whatever a reader missed is a problem with the file, never an exception: a reload
        // (SIGHUP, POST /admin/reload) is then refused and the running config keeps serving.
        result.config = nullptr;
        result.problems.push_back(
            {std::string(file), 0, std::string("the config cannot be read: ") + e.what()});
    }
    return result;
}

LoadResult LoadConfigFile(const std::string& path, const EnvLookup& env) {
    LoadResult result;
    std::string text;
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            result.problems.push_back({path, 0, "cannot read file"});
            return result;
        }
        // Read no further than the limit: a path such as /dev/zero never ends.
        char buffer[64 * 1024];
        while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
            text.append(buffer, static_cast<std::size_t>(in.gcount()));
            if (text.size() > kMaxConfigBytes) {
                result.problems.push_back(
                    {path, 0, fmt::format("larger than {} MiB", kMaxConfigBytes >> 20)});
                return result;
            }
        }
    } catch (const std::exception& e) {
        result.problems.push_back({path, 0, std::string("cannot read file: ") + e.what()});
        return result;
    }
    return LoadConfigText(text, path, env);
}

}  // namespace switchyard::config
