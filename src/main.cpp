// switchyard: the LLM API gateway. This file is the composition root: it loads the config, builds
// the process-wide objects and hands references down; nothing else constructs them.

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config_loader.h"
#include "config/key_request.h"
#include "config/litellm_import.h"
#include "config/yaml_limits.h"
#include "core/clock.h"
#include "core/sha256.h"
#include "core/url.h"
#include "core/version.h"
#include "drills/drill_command.h"
#include "limits/client_budgets.h"
#include "limits/client_keys.h"
#include "limits/headroom.h"
#include "limits/lanes.h"
#include "observe/access_log.h"
#include "observe/metrics.h"
#include "observe/trace_exporter.h"
#include "server/batch_runner.h"
#include "server/drill_schedule.h"
#include "server/durable_state.h"
#include "server/runtime.h"
#include "server/server.h"
#include "state/durable_store.h"
#include "state/redis_state.h"
#include "state/redis_transfer.h"
#include "upstream/tls_contexts.h"

namespace {

using namespace switchyard;

constexpr std::string_view kUsage = R"(switchyard — LLM API gateway

Usage:
  switchyard serve [--config FILE] [--listen HOST:PORT] [--workers N] [--seed N]
      Serve. Without --config the embedded quickstart config is used (upstream: the bundled
      mock provider on 127.0.0.1:4010). --listen and --workers override the config. --seed
      makes the random draws (backoff jitter, trace sampling and ids, retry-after spread)
      repeat from run to run, for tests; without it they are seeded from the system.
  switchyard check FILE
      Validate a config file; prints every problem as file:line: message. Exit 1 on problems.
  switchyard import litellm FILE
      Print the Switchyard config equivalent to a LiteLLM proxy config; every setting that could
      not be carried over goes to stderr with the reason. `serve --config` and `check` accept a
      LiteLLM file directly too.
  switchyard state export [--config FILE] [OUT]
  switchyard state import [--config FILE] IN
      Write the durable state (the SQLite store at state.path, or the fleet's Redis with
      backend redis) as JSON to OUT (stdout without it), or load such a file into it: a backup,
      or a move between the two. The SQLite store's gateway must be stopped (a running one
      exports through GET /admin/state); an import replaces its contents, while one into Redis
      only adds and overwrites.
  switchyard drill --config FILE --group NAME --cases FILE.jsonl [--report FILE.json]
                   [--html FILE.html] [--concurrency N] [--max-cost USD]
      Send every case to every entry of the group's fallback chain (each deployment of each
      stage, whatever its health) as production would, check the answers against the cases'
      expectations, print a table and write the reports. Exit 0 when every entry passed every
      case, 1 when one did not, 2 when the drill could not run.
  switchyard --version | --help
)";

void PrintProblems(const std::vector<config::Problem>& problems) {
    for (const auto& p : problems) fmt::print(stderr, "{}\n", p.ToString());
}

// A config file's text, read no further than a config may be (one past it, so the loader sees
// it is too long): a path such as /dev/zero must not fill memory.
std::optional<std::string> ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(config::kMaxConfigBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

// A config file, Switchyard's own or a LiteLLM proxy config (imported; what could not be carried
// over is reported on stderr).
config::LoadResult LoadAnyConfig(const std::string& path, const config::EnvLookup& env) {
    const std::optional<std::string> text = ReadFile(path);
    config::LoadResult result;
    if (!text || !config::LooksLikeLiteLlm(*text)) {
        result = config::LoadConfigFile(path, env);
    } else {
        const config::LiteLlmImport imported = config::ImportLiteLlm(*text);
        for (const std::string& note : imported.unmapped) {
            fmt::print(stderr, "{}: LiteLLM setting not carried over: {}\n", path, note);
        }
        result = config::LoadConfigText(imported.yaml, path + " (imported from LiteLLM)", env);
    }
    // The scheduled drills' cases are part of the config.
    if (result.config) {
        std::vector<config::Problem> drills = drills::CaseProblems(*result.config, path);
        if (!drills.empty()) {
            result.problems = std::move(drills);
            result.config = nullptr;
        }
    }
    return result;
}

int Import(const std::vector<std::string_view>& args) {
    if (args.size() != 2 || args[0] != "litellm") {
        fmt::print(stderr, "usage: switchyard import litellm FILE\n");
        return 2;
    }
    const std::string path(args[1]);
    const std::optional<std::string> text = ReadFile(path);
    if (!text) {
        fmt::print(stderr, "{}: cannot read file\n", path);
        return 1;
    }
    const config::LiteLlmImport imported = config::ImportLiteLlm(*text);
    if (!imported.error.empty()) {
        fmt::print(stderr, "{}: {}\n", path, imported.error);
        return 1;
    }
    for (const std::string& note : imported.unmapped) {
        fmt::print(stderr, "not carried over: {}\n", note);
    }
    fmt::print("{}", imported.yaml);
    // The result is checked as `switchyard check` would (secrets are not needed for that).
    const config::EnvLookup placeholder = [](std::string_view) -> std::optional<std::string> {
        return std::string("placeholder");
    };
    const config::LoadResult loaded =
        config::LoadConfigText(imported.yaml, "<imported config>", placeholder);
    if (!loaded.problems.empty()) {
        fmt::print(stderr, "the imported config needs attention:\n");
        PrintProblems(loaded.problems);
        return 1;
    }
    return 0;
}

int Check(const std::string& path) {
    const config::LoadResult result = LoadAnyConfig(path, config::ProcessEnvironment());
    if (!result.problems.empty()) {
        PrintProblems(result.problems);
        fmt::print(stderr, "{}: {} problem(s)\n", path, result.problems.size());
        return 1;
    }
    std::size_t deployments = 0;
    for (const auto& g : result.config->models) deployments += g.deployments.size();
    fmt::print("{}: OK ({} model group(s), {} deployment(s))\n", path, result.config->models.size(),
               deployments);
    return 0;
}

// `switchyard state export|import` (docs/state.md#backups-and-moves).
int StateCommand(const std::vector<std::string_view>& args) {
    constexpr std::string_view kStateUsage =
        "usage: switchyard state export [--config FILE] [OUT]\n"
        "       switchyard state import [--config FILE] IN\n";
    if (args.empty() || (args[0] != "export" && args[0] != "import")) {
        fmt::print(stderr, "{}", kStateUsage);
        return 2;
    }
    const bool exporting = args[0] == "export";
    std::optional<std::string> config_path, file;
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--config" && i + 1 < args.size()) {
            config_path = std::string(args[++i]);
        } else if (!file && !args[i].starts_with("--")) {
            file = std::string(args[i]);
        } else {
            fmt::print(stderr, "{}", kStateUsage);
            return 2;
        }
    }
    if (!exporting && !file) {
        fmt::print(stderr, "{}", kStateUsage);
        return 2;
    }
    const auto env = config::ProcessEnvironment();
    const config::LoadResult loaded =
        config_path ? LoadAnyConfig(*config_path, env)
                    : config::LoadConfigText(config::EmbeddedDefaultConfig(),
                                             "<embedded quickstart.yaml>", env);
    if (!loaded.problems.empty()) {
        PrintProblems(loaded.problems);
        return 1;
    }
    const config::StateConfig& state = loaded.config->state;
    if (state.backend == config::StateConfig::Backend::kMemory) {
        fmt::print(stderr,
                   "switchyard state: the config's state.backend is memory: nothing is kept\n");
        return 1;
    }
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const bool redis = state.backend == config::StateConfig::Backend::kRedis;
    const std::string where = redis ? "Redis at " + state.url : state.path;
    try {
        if (exporting) {
            state::StoreContents contents;
            if (redis) {
                std::vector<std::string> hashes;
                for (const auto& key : loaded.config->keys) hashes.push_back(key.sha256);
                state::RedisRead read = state::ReadFromRedis(state, hashes, now_ms);
                if (read.unknown_spend > 0) {
                    fmt::print(stderr,
                               "switchyard state: {} month(s) of spend left out: of keys neither "
                               "the config nor the runtime keys name\n",
                               read.unknown_spend);
                }
                contents = std::move(read.contents);
            } else {
                // An export never creates a store: a path with none is a mistake to report.
                if (!std::filesystem::exists(state.path)) {
                    fmt::print(stderr, "switchyard state: there is no store at {}\n", state.path);
                    return 1;
                }
                contents = state::DurableStore(state.path, loaded.config->idempotency.max_bytes)
                               .Load(now_ms);
            }
            const std::string text =
                boost::json::serialize(state::ExportContents(contents, now_ms)) + "\n";
            if (!file) {
                fmt::print("{}", text);
                return 0;
            }
            std::ofstream out(*file, std::ios::binary | std::ios::trunc);
            out << text;
            if (!out.flush()) {
                fmt::print(stderr, "switchyard state: cannot write {}\n", *file);
                return 1;
            }
            return 0;
        }
        std::ifstream in(*file, std::ios::binary);
        if (!in) {
            fmt::print(stderr, "switchyard state: cannot read {}\n", *file);
            return 1;
        }
        std::stringstream text;
        text << in.rdbuf();
        boost::system::error_code ec;
        const boost::json::value document = boost::json::parse(text.str(), ec);
        if (ec) {
            fmt::print(stderr, "switchyard state: {}: not JSON: {}\n", *file, ec.message());
            return 1;
        }
        const state::StoreContents contents = state::ImportContents(document);
        if (redis) {
            state::WriteToRedis(state, contents, now_ms);
        } else {
            state::DurableStore(state.path, loaded.config->idempotency.max_bytes).Replace(contents);
        }
        fmt::print(stderr,
                   "switchyard state: {} now holds {} key(s), {} spend row(s), {} mark(s), {} "
                   "kept answer(s) from {}\n",
                   where, contents.keys.size(), contents.spend.size(), contents.marks.size(),
                   contents.idempotency.size(), *file);
        return 0;
    } catch (const state::StoreError& e) {
        fmt::print(stderr, "switchyard state: {}\n", e.what());
        return 1;
    }
}

// What this replica does with what the fleet's other replicas share (docs/state.md).
std::unique_ptr<observe::TraceExporter> MakeTraceExporter(const config::TelemetryConfig& telemetry,
                                                          observe::Metrics& metrics) {
    observe::TraceExporter::Options options;
    options.host = telemetry.collector.host;
    options.port = telemetry.collector.port;
    options.host_header = telemetry.collector.HostHeader();
    options.path = telemetry.traces_path;
    for (const auto& [name, value] : telemetry.headers) {
        options.headers.emplace_back(name, value.Reveal());
    }
    options.service_name = telemetry.service_name;
    options.service_version = std::string(kVersion);
    options.max_queue = telemetry.max_queue;
    options.max_batch = telemetry.max_batch;
    options.interval = telemetry.export_interval;
    options.timeout = telemetry.export_timeout;
    return std::make_unique<observe::TraceExporter>(std::move(options), metrics);
}

state::RedisState::Handlers SharedStateHandlers(server::RuntimeSlot& runtime,
                                                const core::Clock& clock,
                                                limits::ClientKeys& keys) {
    state::RedisState::Handlers handlers;
    handlers.health = [&runtime, &clock](std::string_view deployment,
                                         const routing::HealthChange& change) {
        const std::shared_ptr<server::Runtime> current = runtime.Current();
        if (const auto index = server::FindDeployment(*current->config, deployment)) {
            current->health->Apply(*index, change, clock.Now());
        }
    };
    handlers.deployments = [&runtime] {
        std::vector<std::string> names;
        for (const auto& group : runtime.Current()->config->models) {
            for (const auto& d : group.deployments) names.push_back(d.name);
        }
        return names;
    };
    // A key another replica added: read as the admin API reads one, against this config.
    const auto add = [&runtime, &keys](const boost::json::object& body) {
        auto parsed =
            config::ParseKeyRequest(boost::json::serialize(body), *runtime.Current()->config);
        if (auto* request = std::get_if<config::KeyRequest>(&parsed)) {
            std::string already;  // delivered twice, or read again after a reconnect
            keys.Add(std::move(request->key), already);
        }
    };
    handlers.key_added = add;
    handlers.keys_loaded = [add](const std::vector<boost::json::object>& all) {
        for (const auto& body : all) add(body);
    };
    handlers.key_removed = [&keys](std::string_view name) { keys.Remove(name); };
    handlers.keys_removed = [&keys](const std::vector<std::string>& names) {
        // Only keys added at run time: the config's own keys are the config's.
        for (const auto& key : keys.List()) {
            if (key->FromConfig()) continue;
            if (std::find(names.begin(), names.end(), key->Policy().name) != names.end()) {
                keys.Remove(key->Policy().name);
            }
        }
    };
    return handlers;
}

// What `switchyard serve` was told on its command line.
struct ServeArgs {
    std::optional<std::string> config_path;
    std::optional<std::string> listen;
    std::optional<unsigned> workers;
    std::optional<std::uint64_t> seed;
};

// nullopt (with the usage printed) when an argument is not understood.
std::optional<ServeArgs> ParseServeArgs(const std::vector<std::string_view>& args) {
    ServeArgs parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        const bool has_value = i + 1 < args.size();
        if (arg == "--config" && has_value) {
            parsed.config_path = std::string(args[++i]);
        } else if (arg == "--listen" && has_value) {
            parsed.listen = std::string(args[++i]);
        } else if (arg == "--seed" && has_value) {
            parsed.seed = std::strtoull(std::string(args[++i]).c_str(), nullptr, 10);
        } else if (arg == "--workers" && has_value) {
            parsed.workers =
                static_cast<unsigned>(std::strtoul(std::string(args[++i]).c_str(), nullptr, 10));
        } else {
            fmt::print(stderr, "switchyard serve: unexpected argument '{}'\n{}", arg, kUsage);
            return std::nullopt;
        }
    }
    return parsed;
}

// A reload (SIGHUP or POST /admin/reload) reads the same file with the same command-line
// overrides; what only a restart changes (listen, workers, the access log, retry.budget) keeps
// its start-up value. A config that does not load is refused and the running one keeps serving.
struct Reloader {
    const std::optional<std::string>& config_path;
    const config::EnvLookup& env;
    server::RuntimeSlot& runtime;
    upstream::TlsContexts& tls;
    limits::ClientKeys& keys;
    const server::HealthSink& sink;
    const core::Clock& clock;
    std::mutex reloading;

    server::ReloadResult operator()() {
        std::lock_guard lock(reloading);
        server::ReloadResult result;
        if (!config_path) {
            result.problems.push_back("serving the embedded config: there is no file to reload");
            return result;
        }
        config::LoadResult fresh;
        try {
            fresh = LoadAnyConfig(*config_path, env);
        } catch (const std::exception& e) {
            // The loader returns its problems; anything else is refused too, never the process's
            // end.
            result.problems.push_back(*config_path + ": " + e.what());
            return result;
        }
        for (const auto& problem : fresh.problems) result.problems.push_back(problem.ToString());
        if (!result.problems.empty()) return result;
        auto next = std::make_shared<config::Config>(*fresh.config);
        const std::shared_ptr<server::Runtime> current = runtime.Current();
        next->server.listen_host = current->config->server.listen_host;
        next->server.listen_port = current->config->server.listen_port;
        next->server.workers = current->config->server.workers;
        try {
            tls.Load(*next);
        } catch (const std::exception& e) {
            result.problems.push_back(e.what());
            return result;
        }
        for (const auto& group : next->models) result.deployments += group.deployments.size();
        result.models = next->models.size();
        const std::vector<config::ClientKey> next_keys = next->keys;
        runtime.Replace(server::BuildRuntime(std::move(next), clock.Now(), current.get(), sink));
        keys.Reload(next_keys);  // after the swap: a key never names a lane its config lacks
        return result;
    }
};

int Serve(const std::vector<std::string_view>& args) {
    const std::optional<ServeArgs> parsed = ParseServeArgs(args);
    if (!parsed) return 2;
    const auto& [config_path, listen, workers, seed] = *parsed;
    const auto env = config::ProcessEnvironment();
    config::LoadResult loaded = config_path
                                    ? LoadAnyConfig(*config_path, env)
                                    : config::LoadConfigText(config::EmbeddedDefaultConfig(),
                                                             "<embedded quickstart.yaml>", env);
    if (!loaded.problems.empty()) {
        PrintProblems(loaded.problems);
        return 1;
    }
    auto config = std::make_shared<config::Config>(*loaded.config);
    if (listen &&
        !core::ParseHostPort(*listen, config->server.listen_host, config->server.listen_port)) {
        fmt::print(stderr, "switchyard serve: --listen must be HOST:PORT\n");
        return 2;
    }
    if (workers) config->server.workers = *workers;

    const core::RealClock clock;
    const unsigned shards = config->server.workers > 0 ? config->server.workers : 256;
    observe::Metrics metrics(shards);
    auto access_log = std::make_unique<observe::AccessLog>(config->log.access, shards, metrics);
    std::optional<upstream::TlsContexts> tls;
    try {
        tls.emplace(*config);
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchyard: {}\n", e.what());
        return 1;
    }
    limits::ClientBudgets client_budgets(config->retry.budget_max_tokens,
                                         config->retry.budget_token_ratio);
    limits::ClientKeys keys(config->keys);
    // The fleet's shared state (docs/state.md); read at start only.
    std::unique_ptr<state::RedisState> shared;
    if (config->state.backend == config::StateConfig::Backend::kRedis) {
        shared = std::make_unique<state::RedisState>(
            config->state, metrics, config->state.tls ? &tls->For(config->state.ca_file) : nullptr,
            seed ? *seed : server::SystemSeed());
    }
    // The durable store (docs/state.md#the-durable-store), read at start only: a store that
    // cannot be opened stops the start, never a silent reset.
    std::unique_ptr<server::DurableState> durable;
    if (config->state.backend == config::StateConfig::Backend::kSqlite) {
        try {
            durable = std::make_unique<server::DurableState>(
                config->state, config->idempotency.max_bytes, metrics, clock);
        } catch (const state::StoreError& e) {
            fmt::print(stderr, "switchyard: {}\n", e.what());
            return 1;
        }
    }
    // Where every change of a deployment's health goes besides its own state.
    server::HealthSink sink;
    if (shared || durable) {
        sink = [fleet = shared.get(), store = durable.get()](std::string_view deployment,
                                                             const routing::HealthChange& change) {
            if (fleet != nullptr) fleet->ShareHealth(std::string(deployment), change);
            if (store != nullptr) store->HealthChanged(deployment, change);
        };
    }
    // Traces (docs/observability.md#traces); the collector is read at start only.
    std::unique_ptr<observe::TraceExporter> traces;
    if (config->telemetry.Enabled()) traces = MakeTraceExporter(config->telemetry, metrics);
    server::RuntimeSlot runtime(server::BuildRuntime(config, clock.Now(), nullptr, sink));
    Reloader reloader{config_path, env, runtime, *tls, keys, sink, clock, {}};
    const auto reload = [&reloader] { return reloader(); };
    server::ServerContext context{runtime, clock,          metrics, *access_log,
                                  *tls,    client_budgets, keys,    reload};
    if (shared) {
        shared->SetHandlers(SharedStateHandlers(runtime, clock, keys));
        context.shared = shared.get();
    }
    context.traces = traces.get();
    // Kept answers (docs/answers.md); the idempotency store's size is read at start only.
    answers::IdempotencyStore idempotency(config->idempotency.max_bytes);
    answers::ResponseCache cache;
    context.idempotency = &idempotency;
    context.cache = &cache;
    // Answers checked against client-supplied schemas: bounded work, but not on an event loop.
    boost::asio::thread_pool checks(2);
    context.checks = &checks;
    // A client's retry of what Switchyard just gave up on, though it says nothing: for two
    // minutes (an SDK's backoff is seconds), at most 16,384 requests (about 1 MiB).
    limits::RecentGiveUps give_ups(16'384, std::chrono::minutes(2));
    context.give_ups = &give_ups;
    limits::BodyBudget bodies;
    context.bodies = &bodies;
    if (durable) {
        const server::DurableState::Restored restored =
            durable->Restore(*config, keys, *runtime.Current(), &idempotency);
        fmt::print(stderr,
                   "switchyard: state store {}: restored {} key(s) added at run time, {} key "
                   "month(s) of spend, {} deployment mark(s), {} kept answer(s)\n",
                   durable->Path(), restored.keys, restored.spend, restored.marks,
                   restored.answers);
        durable->Start(keys);
        context.durable = durable.get();
    }
    // A file-size limit (ulimit -f) makes a write fail with EFBIG, handled as a full disk, instead
    // of ending the process.
    std::signal(SIGXFSZ, SIG_IGN);
    // A SIGHUP before the server watches for it must not end the process.
    std::signal(SIGHUP, SIG_IGN);
    auto server = std::make_unique<server::Server>(context, seed);
    try {
        server->Listen();
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchyard: cannot listen on {}:{}: {}\n", config->server.listen_host,
                   config->server.listen_port, e.what());
        return 1;
    }
    // The Batch APIs' runner (docs/batches.md): jobs resume once the listener is bound, since
    // their lines go through it.
    std::unique_ptr<server::BatchRunner> batch_runner;
    if (durable) {
        std::filesystem::path directory(durable->Path());
        directory.replace_extension();
        directory += "-batch-files";
        try {
            batch_runner = std::make_unique<server::BatchRunner>(
                context, *durable, std::make_unique<batches::FileStore>(directory.string()),
                config->server.listen_host, server->Port());
        } catch (const std::exception& e) {
            fmt::print(stderr, "switchyard: {}\n", e.what());
            return 1;
        }
        context.batch_token = core::RandomHex(32);
        context.batches = batch_runner.get();
        batch_runner->Start();
    }
    // The scheduled fallback drills (docs/drills.md#scheduled-drills), reloads included.
    server::DrillSchedule drill_schedule(context);
    context.drills = &drill_schedule;
    drill_schedule.Start();
    const bool clean = server->Run([&] {
        fmt::print(stderr, "switchyard {} listening on {}:{}\n", kVersion,
                   config->server.listen_host, server->Port());
        std::fflush(stderr);
    });
    // Lines still in flight end with the drain; their results are written before the store stops.
    if (batch_runner && clean) batch_runner->Stop();
    if (clean) drill_schedule.Stop();
    if (durable) durable->Stop();  // what the last requests spent is written
    if (!clean) {
        access_log.reset();  // flush what was logged, then leave without unwinding the workers
        std::fflush(stdout);
        std::_Exit(0);
    }
    server.reset();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        fmt::print("{}", kUsage);
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
        fmt::print("switchyard {}\n", kVersion);
        return 0;
    }
    if (args[0] == "check") {
        if (args.size() != 2) {
            fmt::print(stderr, "usage: switchyard check FILE\n");
            return 2;
        }
        return Check(std::string(args[1]));
    }
    if (args[0] == "serve") return Serve({args.begin() + 1, args.end()});
    if (args[0] == "import") return Import({args.begin() + 1, args.end()});
    if (args[0] == "state") return StateCommand({args.begin() + 1, args.end()});
    if (args[0] == "drill") {
        return drills::DrillCommand({args.begin() + 1, args.end()}, [](const std::string& path) {
            return LoadAnyConfig(path, config::ProcessEnvironment());
        });
    }
    fmt::print(stderr, "switchyard: unknown command '{}'\n{}", args[0], kUsage);
    return 2;
}
