#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/url.h"
#include "policy/outcome.h"

namespace switchyard::config {

using Millis = std::chrono::milliseconds;

// A secret read from the environment (`os.environ/NAME`) or given inline. It has no stream
// operator and no formatter on purpose: the only way to read it is `Reveal()`, used where the
// value goes on the wire.
class Secret final {
  public:
    Secret() = default;
    Secret(std::string value, std::string origin)
        : value_(std::move(value)), origin_(std::move(origin)) {}

    bool Empty() const { return value_.empty(); }
    const std::string& Reveal() const { return value_; }
    // Where it came from, safe to print: "env SWITCHYARD_MASTER_KEY" or "inline".
    const std::string& Origin() const { return origin_; }

  private:
    std::string value_;
    std::string origin_;
};

// The wire format a deployment speaks (and a client, for the front API).
enum class Provider { kOpenAi, kAnthropic };

// A deployment's known rate limits per minute (0: unknown). They seed its headroom buckets; the
// provider's rate-limit headers correct them on every response.
struct DeploymentLimits {
    std::int64_t rpm = 0;   // requests (both providers)
    std::int64_t tpm = 0;   // tokens (OpenAI: max(max_tokens, input estimate) per request)
    std::int64_t itpm = 0;  // input tokens (Anthropic; cache reads do not count)
    std::int64_t otpm = 0;  // output tokens actually generated (Anthropic)
};

// One concrete upstream target: provider + model + endpoint + key.
struct Deployment {
    std::string name;       // unique across the config; used in logs, metrics and headers
    std::size_t index = 0;  // position among all deployments of the config (for shared state)
    Provider provider = Provider::kOpenAi;
    std::string model;  // the model name sent upstream
    core::BaseUrl base_url;
    std::string api_base;  // as written, for display
    Secret api_key;
    double weight = 1.0;
    std::string ca_file;  // extra trust anchors for TLS; the system store is always used too
    std::string anthropic_version = "2023-06-01";  // the anthropic-version header (Anthropic)
    // OpenAI: whether it also serves the Responses API (POST {base}/responses). Default: true for
    // OpenAI's own endpoint, false for compatible servers (Responses requests are then translated
    // to chat completions).
    bool responses_api = false;
    double input_price = 0;   // per million input tokens, for the cheapest strategy
    double output_price = 0;  // per million output tokens
    // What the provider's batch API charges, per million tokens (docs/batches.md); negative: the
    // price above times batches.price_ratio.
    double batch_input_price = -1;
    double batch_output_price = -1;
    DeploymentLimits limits;
    // Where it processes data (`eu`, `us`, ...; docs/resilience.md#data-residency); empty: not
    // said, which no residency constraint admits.
    std::string region;
    int line = 0;
};

// How a model group spreads requests over its deployments.
enum class Strategy {
    kWeighted,       // random in proportion to weight (default)
    kPriority,       // in the order listed
    kLeastInFlight,  // fewest attempts in flight first
    kLowestLatency,  // lowest moving average of time to first byte first
    kCheapest,       // lowest price first, pricier ones as fallbacks
    kPowerOfTwo,     // of two random deployments, the one with fewer in flight
};

// What a model group serves: chat answers (chat completions, Anthropic messages) or embeddings.
enum class GroupMode { kChat, kEmbeddings };

// What a client names in `model`. A group is also a fallback entry: model + prompt + params
// (docs/resilience.md#a-fallback-changes-the-product), so `system_prompt` and `params` apply when
// it serves as a fallback for another.
// A model group's response cache (docs/answers.md#response-cache).
struct CacheConfig {
    enum class Serve {
        kOnError,  // only when the whole chain failed, before the degradation (stale)
        kAlways,   // every exact match (hit)
    } serve = Serve::kOnError;
    std::chrono::seconds ttl{3600};
    std::size_t max_entries = 1000;
    std::size_t max_entry_bytes = 256 * 1024;
    bool shared = false;  // one answer for every client key (else each key has its own)
};

// Structured output checked against a JSON Schema (docs/answers.md#output-validation).
struct ValidationConfig {
    // The group's own schema (JSON text) for requests that ask for none; empty: only requests'.
    std::string schema;
    enum class OnInvalid {
        kFallback,  // the attempt failed: the next deployment or fallback is tried
        kAnnotate,  // the answer is returned marked x-switchyard-validation: failed
    } on_invalid = OnInvalid::kFallback;
};

// Hedged attempts (docs/resilience.md#hedged-attempts): when an attempt has produced no content
// after `delay`, a second one starts on the next target the engine would choose, and the first to
// answer wins. Off unless the group sets `hedge`.
struct HedgeConfig {
    // nullopt (`auto`): twice the deployment's median time to its first content (at least 50 ms),
    // once it has `timeouts.adaptive_min_samples` answers of history (no hedge before).
    std::optional<Millis> delay;
    double max_ratio = 0.1;  // at most this share of the group's requests are hedged
};

// How a batch job for a model group runs (docs/batches.md#two-ways-to-run-a-job): by the
// gateway through its own engine, on the provider's batch API, or on the provider's when one of
// the group's deployments offers it.
enum class BatchMode { kGateway, kProvider, kAuto };

struct ModelGroup {
    std::string name;
    std::vector<Deployment> deployments;
    GroupMode mode = GroupMode::kChat;
    BatchMode batch_mode = BatchMode::kGateway;
    Strategy strategy = Strategy::kWeighted;
    std::vector<std::string> fallbacks;                 // groups tried in order when this fails
    std::vector<std::string> context_window_fallbacks;  // when the prompt does not fit
    std::vector<std::string> content_policy_fallbacks;  // when a content filter refused it
    // The regions a request for this group may be served in, along the whole chain; empty: any.
    std::vector<std::string> residency;
    // Answers kept for this group (docs/answers.md#response-cache); off without `cache`.
    std::optional<CacheConfig> cache;
    ValidationConfig validation;
    std::optional<HedgeConfig> hedge;                         // off without `hedge`
    std::optional<std::string> system_prompt;                 // replaces the system prompt
    std::vector<std::pair<std::string, std::string>> params;  // name -> JSON value text
};

// The classes whose retries `retry.class_retries` sets.
inline constexpr policy::ErrorClass kRetryableClasses[] = {
    policy::ErrorClass::kRateLimited, policy::ErrorClass::kOverloaded,
    policy::ErrorClass::kServerError, policy::ErrorClass::kTimeout,
    policy::ErrorClass::kConnection,  policy::ErrorClass::kRetryableClient,
    policy::ErrorClass::kProtocol};

inline policy::ClassTable<int> DefaultClassRetries() {
    policy::ClassTable<int> t;
    t[policy::ErrorClass::kRateLimited] = 3;
    t[policy::ErrorClass::kOverloaded] = 3;
    t[policy::ErrorClass::kServerError] = 3;
    t[policy::ErrorClass::kTimeout] = 1;
    t[policy::ErrorClass::kConnection] = 2;
    t[policy::ErrorClass::kRetryableClient] = 1;
    t[policy::ErrorClass::kProtocol] = 1;  // a truncated answer; other protocol failures fail over
    return t;
}

// The one layer that retries: how often, how long, and with what budget.
struct RetryConfig {
    int max_attempts = 6;  // upstream attempts per client request, fallbacks included
    Millis base{500};
    Millis cap{20'000};
    Millis deadline{45'000};  // per request, every attempt and wait included
    // Retries per error class within one model group; only the retryable classes
    // (kRetryableClasses) can be set, the others are never retried.
    policy::ClassTable<int> class_retries = DefaultClassRetries();
    // LiteLLM's `num_retries`: retries of a group (all classes together) before its fallbacks,
    // without keeping attempts for them. Unset: a retry never spends the attempt that a fallback
    // that could serve needs.
    std::optional<int> num_retries;
    double budget_max_tokens = 100;
    double budget_token_ratio = 0.1;
};

// Deployment health (docs/resilience.md#cooldowns-and-circuit-breakers): a LiteLLM-style cooldown
// and a circuit breaker per deployment.
struct HealthConfig {
    int allowed_fails = 3;  // failures within window_ms before a cooldown
    Millis window{60'000};
    Millis cooldown{30'000};
    // ... and the fraction of the window's attempts that must have failed (docs/evidence/).
    double allowed_failure_rate = 0.2;
    // ... or this many failed attempts in a row, timeouts included, whatever the window holds
    // (0: allowed_fails + 1).
    int consecutive_fails = 0;
    // When every target that could serve a request is benched, the least-bad one that still
    // answers some of its calls is tried anyway (docs/resilience.md#a-bench-is-a-preference).
    bool panic = true;
    int breaker_consecutive_failures = 5;
    double breaker_failure_rate = 0.5;
    int breaker_minimum_calls = 20;
    Millis breaker_open{30'000};
    int breaker_half_open_probes = 1;
    int breaker_success_threshold = 2;
};

struct AlertConfig {
    std::string webhook_url;  // POSTed a JSON event when a spend cap disables a deployment
};

// What a request gets when every target failed.
struct DegradationConfig {
    enum class Mode { kError, kStatic } mode = Mode::kError;
    std::string content;  // the assistant message of a static response
};

// How a stream is delivered to the client.
enum class StreamMode {
    kInteractive,  // event by event; a failure after the first byte ends it with an error event
    kBackground,   // held whole; a mid-stream failure retries the request, the client sees one
                   // complete stream
};

// Idempotency keys (docs/answers.md#idempotency-keys).
struct IdempotencyConfig {
    std::chrono::seconds ttl{24 * 3600};     // how long a key keeps its answer
    std::size_t max_answer_bytes = 1 << 20;  // a larger answer is not kept (409 on a replay)
    std::size_t max_bytes = 64 << 20;        // this replica's store: answers and keys together
};

// The Batch APIs (docs/batches.md): where their files live, how much they may hold, and how the
// gateway runs a job's lines itself — through the attempt engine, on a low-share lane, a few at a
// time.
struct BatchesConfig {
    std::string lane = "batch";  // the lane lines run in (limits.lanes); missing: the last lane
    int concurrency = 8;         // lines of one job in flight at once
    std::size_t max_file_bytes = 32 << 20;  // one uploaded file (read whole, then stored)
    std::size_t max_stored_bytes = std::size_t{10} << 30;  // every batch file on disk together
    int max_lines = 50'000;                                // lines of one batch
    int line_attempts = 6;     // a line the gateway answers 5xx is tried this often (429s: waited)
    double price_ratio = 0.5;  // a provider batch's price against the synchronous one
    Millis poll{30'000};       // first wait before asking the provider how a batch stands
    Millis max_poll{300'000};  // the longest wait between two polls (they back off)
};

// A fallback drill the gateway runs on a schedule (docs/drills.md#scheduled-drills): every case of
// `cases` on every entry of `group`'s chain, every `every`, in `lane` at the headroom traffic
// leaves.
struct DrillConfig {
    std::string group;
    std::string cases_path;  // as written in the config
    std::string cases;       // the file's text, read with the config
    Millis every{3'600'000};
    std::string lane;       // a lane of limits.lanes; empty: the last one
    int concurrency = 2;    // calls in flight at once
    double max_cost = 1.0;  // USD per run; no call starts past it (0: no cap)
    int line = 0;
};

struct ServerConfig {
    std::string listen_host = "127.0.0.1";
    std::uint16_t listen_port = 4000;
    unsigned workers = 0;  // 0: one per core
    std::size_t max_body_bytes = 8 * 1024 * 1024;
    // Request bodies being served at once, in all and per client (its credential): past either a
    // request is refused before its body is read (503 / 429, retry-after 1 s). A body costs several
    // times its size while it is served; these bound what many large bodies may take together.
    std::size_t max_body_bytes_in_flight = 64 * 1024 * 1024;
    std::size_t max_body_bytes_in_flight_per_key = 32 * 1024 * 1024;
    Millis header_timeout{10'000};  // to receive a whole request once its first byte arrived
    Millis idle_timeout{60'000};    // keep-alive connection with no request
    // A client that takes none of the bytes written to it for this long is gone (one that reads
    // slowly but steadily never is, however long its answer).
    Millis write_timeout{30'000};
    // On SIGTERM: for drain_delay, /health/ready answers 503 and every answer says
    // `Connection: close` while new connections are still accepted (load balancers notice and
    // stop sending); then the listener closes, idle connections close, and in-flight requests
    // have drain_timeout to finish. SIGINT skips the delay.
    Millis drain_delay{5'000};
    Millis drain_timeout{15'000};
    StreamMode stream_mode = StreamMode::kInteractive;  // default; header x-switchyard-stream-mode
    Secret master_key;
};

// Per-attempt upstream timeouts, budgeted separately (docs/resilience.md#timeouts).
struct Timeouts {
    Millis connect{5'000};
    Millis first_byte{120'000};       // request sent -> response headers
    Millis first_token{60'000};       // response headers -> first content event of a stream
    Millis chunk{30'000};             // between stream events once content flows
    Millis total{600'000};            // whole upstream exchange, body included
    bool pings_are_progress = false;  // whether `ping` events and comments reset the chunk timer
    // Adaptive limits (docs/resilience.md#adaptive-timeouts): with enough history, a deployment's
    // first-byte, first-token and chunk limits become `adaptive_multiplier` times its own 99th
    // percentile (never under `adaptive_floor`, never over the limits above, which are ceilings).
    bool adaptive = true;
    double adaptive_multiplier = 3;
    Millis adaptive_floor{2'000};
    int adaptive_min_samples = 20;  // successful answers within the last two windows
    Millis latency_window{300'000};
    // A non-streaming request with max_tokens above this is streamed upstream and assembled, so a
    // generation that may run past ten minutes never idles on a connection
    // (docs/providers.md#long-requests: 3600 s * max_tokens / 128000 > 600 s). 0 turns it off.
    std::int64_t stream_upstream_over_max_tokens = 21'333;
};

struct LogConfig {
    std::string access = "stdout";  // stdout | stderr | off | a file path
};

// A workload lane (docs/resilience.md#headroom-and-lanes): a backfill must not starve the chat
// endpoint. A lane may use `share` of each deployment's headroom (batch only takes what
// interactive leaves); when headroom is short its requests wait in a bounded queue within their
// deadline, and lanes with a smaller share are shed first.
struct Lane {
    std::string name;
    double share = 1.0;            // fraction of a deployment's headroom this lane may use
    std::size_t max_queue = 1000;  // requests of this lane waiting for headroom at once
    Millis slow_start{0};          // after an idle minute, ramp its request rate from 10 % to full
    int line = 0;
};

// Self-throttling: send a request only where the deployment's headroom allows it.
struct LimitsConfig {
    bool self_throttle = true;
    // The window over which a provider may enforce a per-minute limit (60 RPM as 1 per second):
    // each headroom bucket holds limit * burst / 1 min and refills at limit per minute.
    Millis burst{1000};
    std::vector<Lane> lanes = {{"interactive", 1.0, 1000, Millis(0), 0},
                               {"batch", 0.5, 100, Millis(0), 0}};

    // The index of the lane named `name`; nullopt when there is none.
    std::optional<std::size_t> FindLane(std::string_view name) const;
};

// Where the state that protects providers lives (docs/state.md): in this process with a durable
// SQLite file (the default, for one replica), in this process alone (memory: forgotten on exit),
// or in Redis, shared by every replica of a fleet.
struct StateConfig {
    enum class Backend { kMemory, kSqlite, kRedis } backend = Backend::kSqlite;
    // The SQLite file (backend sqlite). Default: switchyard-state.db in $SWITCHYARD_DATA_DIR, or
    // in the working directory.
    std::string path = "switchyard-state.db";
    std::string url = "redis://127.0.0.1:6379/0";  // redis:// or rediss:// (TLS)
    std::string host = "127.0.0.1";                // parsed from url
    std::uint16_t port = 6379;
    int db = 0;
    std::string username;  // from url
    Secret password;       // `password: os.environ/NAME`, or the url's
    bool tls = false;      // rediss://, or `tls: true`
    std::string ca_file;   // extra trust anchors for Redis's certificate
    std::string key_prefix = "switchyard:";
    // Each Redis operation on a request's way gets this long; then the replica decides from its
    // own state (and counts a fallback).
    Millis timeout{10};
    Millis connect_timeout{1'000};
};

// Traces (docs/observability.md#traces): spans exported over OTLP/HTTP (JSON) to a collector.
struct TelemetryConfig {
    std::string otlp_endpoint;  // empty: no traces; "http://host:4318" (the path /v1/traces added)
    core::BaseUrl collector;    // parsed from otlp_endpoint
    std::string traces_path = "/v1/traces";
    std::string service_name = "switchyard";
    double sample_ratio = 1.0;  // of requests that arrive without a sampled parent
    // Extra request headers for the collector (e.g. its API key: `os.environ/NAME` values).
    std::vector<std::pair<std::string, Secret>> headers;
    std::size_t max_queue = 8192;  // spans waiting for export; beyond it they are dropped
    std::size_t max_batch = 512;   // spans per export request
    Millis export_interval{1'000};
    Millis export_timeout{5'000};

    bool Enabled() const { return !otlp_endpoint.empty(); }
};

// A client (virtual) key. Only its SHA-256 is kept; the plaintext comes from the environment or
// is handed out once by the admin API.
struct ClientKey {
    std::string name;
    std::string sha256;                     // lowercase hex of the key's SHA-256
    std::int64_t rpm = 0;                   // requests per minute, 0: unlimited
    std::int64_t tpm = 0;                   // tokens per minute (input estimate + max_tokens)
    double monthly_budget = 0;              // currency per calendar month (UTC), 0: unlimited
    std::vector<std::string> models;        // allowed model groups; empty: all
    std::vector<std::string> residency;     // regions its requests may be served in; empty: any
    std::size_t lane = 0;                   // index into LimitsConfig::lanes (at load time)
    std::string lane_name = "interactive";  // what a request resolves against its own config
    bool fallbacks = true;                  // false: never walk the fallback chain
    std::optional<StreamMode> stream_mode;  // overrides server.stream_mode
    Millis slow_start{0};                   // ramp its rpm/tpm from 10 % after an idle minute
    int line = 0;
};

// The loaded configuration: an immutable snapshot shared by all workers.
struct Config {
    ServerConfig server;
    Timeouts timeouts;
    LogConfig log;
    RetryConfig retry;
    HealthConfig health;
    AlertConfig alerts;
    DegradationConfig degradation;
    IdempotencyConfig idempotency;
    LimitsConfig limits;
    StateConfig state;
    BatchesConfig batches;
    std::vector<DrillConfig> drills;
    TelemetryConfig telemetry;
    std::vector<ClientKey> keys;
    std::vector<ModelGroup> models;
    std::size_t deployment_count = 0;

    const ModelGroup* FindGroup(std::string_view name) const;
};

}  // namespace switchyard::config
