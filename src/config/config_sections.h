#pragma once

#include <yaml-cpp/yaml.h>

#include <vector>

#include "config/config.h"
#include "config/yaml_reading.h"

namespace switchyard::config {

// Internal to the config loader: the reader of each top-level section of a config, which
// LoadConfigText (config_loader.cc) calls in turn. Each reports what is wrong through `r`. Not
// part of the config module's interface (that is config_loader.h).

// config_server.cc: how the gateway serves its clients.
void ReadServer(Reader& r, const YAML::Node& node, ServerConfig& server);
void ReadTimeouts(Reader& r, const YAML::Node& node, Timeouts& timeouts);
void ReadIdempotency(Reader& r, const YAML::Node& node, IdempotencyConfig& idempotency);
void ReadBatches(Reader& r, const YAML::Node& node, BatchesConfig& batches);
// After the models and limits: each drill's group and lane must exist.
void ReadDrills(Reader& r, const YAML::Node& node, Config& config);
void ReadDegradation(Reader& r, const YAML::Node& node, DegradationConfig& degradation);

// config_retry_health.cc: retries and deployment health.
void ReadRetry(Reader& r, const YAML::Node& node, RetryConfig& retry);
void ReadHealth(Reader& r, const YAML::Node& node, HealthConfig& health);

// config_observability.cc: the access log, alerts and telemetry.
void ReadLog(Reader& r, const YAML::Node& node, LogConfig& log);
void ReadAlerts(Reader& r, const YAML::Node& node, AlertConfig& alerts);
void ReadTelemetry(Reader& r, const YAML::Node& node, TelemetryConfig& telemetry);

// config_state.cc: where shared state is kept.
void ReadState(Reader& r, const YAML::Node& node, StateConfig& state);

// config_models.cc: model groups and their deployments.
void ReadModels(Reader& r, const YAML::Node& node, std::vector<ModelGroup>& models);
// Checks that group and deployment names are unique and fallbacks name existing groups (each
// problem at its own line), then names every deployment that has no name. models[i] is the
// i-th entry of the YAML `models` list.
void LinkModels(Reader& r, const YAML::Node& root, Config& config);

// config_limits_keys.cc: lanes and client keys. ReadKeys needs the models and limits read.
void ReadLimits(Reader& r, const YAML::Node& node, LimitsConfig& limits);
// Client keys: the plaintext only from the environment (or just its SHA-256), never inline. Each
// field is read as YAML here; its bounds are ValidateClientKey's.
void ReadKeys(Reader& r, const YAML::Node& node, Config& config);

}  // namespace switchyard::config
