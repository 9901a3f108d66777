#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "config/config.h"
#include "policy/backoff.h"
#include "policy/outcome.h"
#include "routing/fallback_plan.h"

namespace switchyard::engine {

using TimePoint = std::chrono::steady_clock::time_point;
using std::chrono::milliseconds;

// How one request may spend attempts and time: the loaded retry config, with the request's own
// options applied. Immutable for the request's life.
struct EnginePolicy {
    int max_attempts = 6;  // upstream attempts, fallbacks included
    policy::Backoff backoff;
    // Same-stage retries per error class (the class of the failure that is retried).
    policy::ClassTable<int> class_retries{};
    // LiteLLM's `num_retries`: when set, a stage may retry this often (all classes together)
    // before the chain moves on, and the attempts the later stages need are not reserved.
    // Unset: retries are capped by class only, and never spend what an available later stage
    // needs.
    std::optional<int> stage_retries;
    // False when the client says it is retrying on its own (an SDK retry): the gateway then makes
    // one attempt per target that can serve now and waits for no rate limit, so two retry layers
    // do not multiply upstream calls. Waits for headroom (self-throttling) still happen.
    bool retries = true;
};

// One model group of the chain, as the request walks it.
struct Stage {
    routing::PlannedGroup group;
    std::vector<const config::Deployment*> deployments;  // in the group strategy's order
};

// What the shared deployment health says about one target now. The caller reads it before each
// decision; the engine never reads shared state itself.
struct TargetHealth {
    enum class Block {
        kNone,         // may be tried now
        kRateLimited,  // until a known instant (retry-after, a rate-limit reset): worth a wait
        kSick,         // cooling down, circuit open, disabled, or every probe slot taken
    };
    Block block = Block::kNone;
    TimePoint until{};  // when the block lifts (kRateLimited, kSick)
    // The deployment's retry budget allows one more retry.
    bool retry_budget = true;
    // kSick yet answering some of its calls: the share that succeeded, in (0, 1]; 0 when it may
    // not be tried even when nothing else can serve.
    double panic = 0;
    // What an attempt there is expected to take at most before its first content (its own
    // adapted limit); nullopt when its history does not say.
    std::optional<milliseconds> expected;
};

// What the engine knows about one target of its chain for this request.
struct Target {
    const config::Deployment* deployment = nullptr;
    std::size_t stage = 0;  // index into AttemptState::stages
    int attempts = 0;       // sent by this request
    bool excluded = false;  // never again for this request (fail-over, probe slot lost)
    policy::ErrorClass last_class = policy::ErrorClass::kNone;
    TimePoint retry_after_until{};      // the provider's retry-after from this target's last answer
    TimePoint headroom_until{};         // no headroom for this request's lane before
    std::optional<TimePoint> retry_at;  // a retry scheduled after a backoff drawn for it
};

// Per-stage counters.
struct StageState {
    routing::PlannedGroup group;
    std::size_t first_target = 0;  // the stage's targets are [first_target, first_target + count)
    std::size_t target_count = 0;
    policy::ClassTable<int> retries_by_class{};
    int retries = 0;          // same-target retries sent in this stage
    bool queue_full = false;  // the lane's queue refused a wait for headroom
};

// One request's walk through its chain: everything the decision function reads and updates.
// Owned by the request; not thread-safe, and never needs to be.
struct AttemptState {
    AttemptState(EnginePolicy policy, const std::vector<Stage>& chain, TimePoint deadline);

    const EnginePolicy policy;
    const TimePoint deadline;
    std::vector<StageState> stages;
    std::vector<Target> targets;  // every stage's targets, in chain order
    std::size_t stage = 0;        // the stage being walked; the engine never goes back
    int attempts = 0;
    std::optional<std::size_t> sent;   // the target of the last kSend, until its event arrives
    bool sent_retry = false;           // that send retries its target (counted once it happens)
    bool sent_last_resort = false;     // that send was the chain's last resort
    milliseconds attempt_estimate{0};  // how long the last attempt took: the next one's estimate
    // In a panic (every target that could serve is benched): the least-bad benched target, tried
    // anyway. Decided anew before every choice.
    std::optional<std::size_t> panic_target;
    // A hedge of the send in flight (docs/resilience.md#hedged-attempts): its target, until the
    // race's event arrives.
    std::optional<std::size_t> hedge;
    bool hedge_last_resort = false;  // that hedge was the chain's last resort

    // Appends `chain`'s stages and targets.
    void Append(const std::vector<Stage>& chain);
};

// What happened since the last action.
namespace event {
struct Start {};
struct Hedged {  // the hedge of the last kSend went upstream and ended without an answer
    policy::Outcome outcome;
    bool cut = false;
};
struct Attempted {  // the last kSend went upstream and ended
    policy::Outcome outcome;
    TimePoint started;
    TimePoint ended;
    bool cut = false;  // no answer came within the attempt's limits (not a provider's 504)
    // Its hedge (Hedge), when one went upstream; a hedge that was not sent is forgotten.
    std::optional<Hedged> hedge;
};
struct Waited {};
struct NoHeadroom {  // the last kSend found no headroom for the lane; none until `wait` passes
    milliseconds wait;
};
struct NotAdmitted {};  // the last kSend lost the deployment's last half-open probe slot
struct QueueFull {};    // the last kWait for headroom found the lane's queue full
struct ChainReplaced {  // after kReplaceChain: the semantic fallbacks (empty: there are none)
    std::vector<Stage> stages;
};
}  // namespace event
using Event = std::variant<event::Start, event::Attempted, event::Waited, event::NoHeadroom,
                           event::NotAdmitted, event::QueueFull, event::ChainReplaced>;

// Why the engine stopped without an answer.
enum class GiveUpReason {
    kAttempts,   // max_attempts spent
    kDeadline,   // the deadline passed, or no wait that could still help fits before it
    kExhausted,  // no target of the chain can be tried again
};

// The next thing the request does.
struct Action {
    enum class Kind {
        kSend,          // an attempt to `target`
        kWait,          // sleep `wait`, then ask again
        kReplaceChain,  // plan the `semantic` fallbacks of the stage and report ChainReplaced
        kPassThrough,   // the last upstream answer is the client's (a client error)
        kGiveUp,        // answer with an error (or a degradation)
        kDone,          // the last attempt answered the client
    };
    enum class WaitFor { kBackoff, kRateLimit, kHeadroom };

    Kind kind = Kind::kGiveUp;
    std::size_t target = 0;  // kSend: index into AttemptState::targets
    bool retry = false;      // kSend: the target was tried before by this request
    milliseconds wait{0};    // kWait, at least 1 ms
    WaitFor wait_for = WaitFor::kBackoff;
    // kSend: how long the attempt may wait for its first content — its share of the deadline,
    // leaving the later stages that could serve the time they need.
    milliseconds budget{0};
    // kSend: nothing else of the chain could serve after it, so it gets the rest of the deadline
    // and the configured limits (never cut early by the deployment's latency).
    bool last_resort = false;
    // kSend: the target is benched and tried anyway, in a panic.
    bool panic = false;
    policy::Action semantic = policy::Action::kContextFallback;  // kReplaceChain
    GiveUpReason reason = GiveUpReason::kExhausted;              // kGiveUp
    // kGiveUp: the time until some target of the chain can serve again, when every one is blocked
    // until a known instant; nullopt when one could serve now or nothing known will change.
    std::optional<milliseconds> retry_after;
    // kGiveUp: every blocked target waits only for a rate limit or for headroom (429, not 503).
    bool rate_limited = false;
    // kGiveUp with no attempt made: the shortest wait for headroom that did not fit.
    std::optional<milliseconds> headroom_short_for;
};

// What the decision reads besides the state: the health of the deployments (indexed by
// config::Deployment::index; only those of the chain are read), the client's retry budget, the
// time and one draw from [0, 1).
struct World {
    std::span<const TargetHealth> health;
    bool client_retry_budget = true;
    TimePoint now;
    double uniform = 0;
};

}  // namespace switchyard::engine
