// The attempt engine's invariants, checked over many random requests: random chains, policies,
// deadlines, health, outcomes, retry-after values, budgets, headroom refusals and semantic
// fallbacks. Seeded and reproducible; SWITCHYARD_ENGINE_RUNS and SWITCHYARD_ENGINE_SEED run it
// longer or elsewhere.
//
// The model below keeps its own record of what was sent and what came back; it never reads the
// engine's state to judge the engine.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "engine/decide.h"
#include "engine_test_support.h"

namespace switchyard::engine {
namespace decide_property_test {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using testing::ChainBuilder;
using testing::kT0;
using Kind = Action::Kind;
using Block = TargetHealth::Block;
using policy::ErrorClass;

constexpr ErrorClass kRetryClasses[] = {ErrorClass::kRateLimited, ErrorClass::kOverloaded,
                                        ErrorClass::kServerError, ErrorClass::kTimeout,
                                        ErrorClass::kConnection,  ErrorClass::kRetryableClient};

std::uint64_t EnvOr(const char* name, std::uint64_t fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

// How often each kind of decision was seen, so that the run shows it reached every rule.
struct Coverage {
    std::map<Kind, long> actions;
    long retries = 0;
    long headroom_waits = 0;
    long semantic_continuations = 0;
    long give_ups_with_retry_after = 0;
};

// One random request, driven to its end. Returns "" or the first broken invariant.
class RandomRequest {
  public:
    RandomRequest(std::uint64_t seed, Coverage& coverage) : rng_(seed), coverage_(coverage) {}

    std::string Go() {
        const std::vector<Stage> chain = RandomChain();
        const EnginePolicy policy = RandomPolicy();
        policy_ = policy;
        deadline_ = kT0 + milliseconds(Between(50, 60'000));
        health_.resize(builder_.DeploymentCount());
        for (TargetHealth& h : health_) h = RandomHealth();
        client_budget_ = Chance(0.9);
        AttemptState state(policy, chain, deadline_);
        Event event = event::Start{};
        for (int step = 0; step < 1000; ++step) {
            const World world{health_, client_budget_, now_, Uniform()};
            const Action action = Decide(state, std::move(event), world);
            if (std::string broken = Check(state, action); !broken.empty()) return broken;
            Count(state, action);
            switch (action.kind) {
                case Kind::kSend:
                    event = Execute(state.targets[action.target].deployment);
                    break;
                case Kind::kWait:
                    last_stage_ =
                        std::max(last_stage_, stage_of_[state.targets[action.target].deployment]);
                    if (action.wait_for == Action::WaitFor::kHeadroom && Chance(0.2)) {
                        queue_full_.insert(stage_of_[state.targets[action.target].deployment]);
                        event = event::QueueFull{};
                        break;
                    }
                    now_ += action.wait;
                    Evolve();
                    event = event::Waited{};
                    break;
                case Kind::kReplaceChain:
                    event = Replace();
                    break;
                default:
                    return "";
            }
        }
        return "no end after 1000 decisions";
    }

  private:
    struct Sent {
        int attempts = 0;
        bool excluded = false;
        policy::Outcome last;
        TimePoint retry_after_until{};
        TimePoint headroom_until{};
    };

    double Uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
    bool Chance(double p) { return Uniform() < p; }
    long Between(long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng_); }

    std::vector<Stage> RandomChain() {
        std::vector<Stage> chain;
        const int stages = static_cast<int>(Between(1, 4));
        for (int i = 0; i < stages; ++i) AddStage(chain, i);
        return chain;
    }
    void AddStage(std::vector<Stage>& chain, int depth) {
        const Stage stage = builder_.Add("g" + std::to_string(stages_.size()),
                                         static_cast<int>(Between(1, 3)), depth);
        for (const config::Deployment* d : stage.deployments) stage_of_[d] = stages_.size();
        stages_.push_back(stage.deployments);
        chain.push_back(stage);
    }

    EnginePolicy RandomPolicy() {
        EnginePolicy p;
        p.max_attempts = static_cast<int>(Between(1, 8));
        p.backoff = {milliseconds(Between(1, 500)), milliseconds(Between(500, 5'000))};
        for (const ErrorClass c : kRetryClasses)
            p.class_retries[c] = static_cast<int>(Between(0, 3));
        if (Chance(0.25)) p.stage_retries = static_cast<int>(Between(0, 3));
        p.retries = Chance(0.85);
        return p;
    }

    TargetHealth RandomHealth() {
        TargetHealth h;
        const double roll = Uniform();
        if (roll < 0.15) {
            h = {Block::kRateLimited, now_ + milliseconds(Between(1, 10'000))};
        } else if (roll < 0.3) {
            h = {Block::kSick, now_ + milliseconds(Between(1, 60'000))};
        }
        h.retry_budget = Chance(0.9);
        return h;
    }

    // Blocks lift when their time has come; now and then a deployment turns sick or limited.
    void Evolve() {
        for (TargetHealth& h : health_) {
            if (h.block != Block::kNone && h.until <= now_) h.block = Block::kNone;
            if (Chance(0.03)) {
                const bool budget = h.retry_budget;
                h = RandomHealth();
                h.retry_budget = budget;
            }
        }
    }

    policy::Outcome RandomOutcome() {
        const double roll = Uniform();
        if (roll < 0.15) return {};
        if (roll < 0.7) {
            const ErrorClass c = kRetryClasses[Between(0, std::size(kRetryClasses) - 1)];
            std::optional<milliseconds> retry_after;
            if (c == ErrorClass::kRateLimited ? Chance(0.8) : Chance(0.2)) {
                retry_after = milliseconds(Between(0, 5'000));
            }
            return {policy::Action::kRetry, c, retry_after};
        }
        if (roll < 0.8) return {policy::Action::kFailOver, ErrorClass::kQuotaExhausted};
        if (roll < 0.85) return {policy::Action::kGiveUp, ErrorClass::kBadRequest};
        if (roll < 0.93) return {policy::Action::kContextFallback, ErrorClass::kContextWindow};
        return {policy::Action::kContentFallback, ErrorClass::kContentPolicy};
    }

    Event Execute(const config::Deployment* d) {
        Sent& sent = sent_[d];
        last_stage_ = std::max(last_stage_, stage_of_[d]);
        last_sent_ = d;
        if (Chance(0.1)) {
            const milliseconds wait(Between(1, 2'000));
            sent.headroom_until = now_ + wait;
            return event::NoHeadroom{wait};
        }
        if (Chance(0.04)) {
            sent.excluded = true;
            return event::NotAdmitted{};
        }
        const TimePoint started = now_;
        now_ += milliseconds(Chance(0.8) ? Between(1, 300) : Between(300, 8'000));
        const policy::Outcome outcome = RandomOutcome();
        ++attempts_;
        if (sent.attempts > 0) {
            // A retry: counted against the class of the failure it retries.
            ++retries_[stage_of_[d]][sent.last.error_class];
            ++stage_retries_[stage_of_[d]];
        }
        ++sent.attempts;
        sent.last = outcome;
        last_outcome_ = outcome;
        if (outcome.action == policy::Action::kFailOver) sent.excluded = true;
        if (outcome.retry_after) {
            sent.retry_after_until = std::max(sent.retry_after_until, now_ + *outcome.retry_after);
        }
        // Health follows the outcome as DeploymentHealth would: a rate limit until retry-after,
        // sometimes a cooldown after a failure.
        TargetHealth& h = health_[d->index];
        if (outcome.error_class == ErrorClass::kRateLimited && outcome.retry_after) {
            h.block = Block::kRateLimited;
            h.until = std::max(h.until, now_ + *outcome.retry_after);
        } else if (outcome.action == policy::Action::kRetry && Chance(0.2)) {
            h.block = Block::kSick;
            h.until = now_ + milliseconds(Between(1, 30'000));
        }
        if (Chance(0.05)) h.retry_budget = false;
        if (Chance(0.02)) client_budget_ = false;
        Evolve();
        return event::Attempted{outcome, started, now_};
    }

    Event Replace() {
        event::ChainReplaced replaced;
        if (Chance(0.6)) {
            const int stages = static_cast<int>(Between(1, 2));
            for (int i = 0; i < stages; ++i) AddStage(replaced.stages, static_cast<int>(i + 1));
            health_.resize(builder_.DeploymentCount());  // new deployments start healthy
        }
        // The stages of the old chain after `from` are gone; the semantic ones are next.
        semantic_.clear();
        for (const Stage& s : replaced.stages) {
            for (const config::Deployment* d : s.deployments) semantic_.insert(d);
        }
        semantic_only_ = true;
        active_.clear();
        for (const Stage& s : replaced.stages) active_.push_back(stage_of_[s.deployments[0]]);
        last_stage_ = stages_.size();  // nothing behind the replacement counts as ahead
        if (!replaced.stages.empty()) last_stage_ = stage_of_[replaced.stages[0].deployments[0]];
        empty_replacement_ = replaced.stages.empty();
        return replaced;
    }

    // Whether the model says `d` could be sent to now as an untried target.
    bool UntriedAndFree(const config::Deployment* d) {
        const auto it = sent_.find(d);
        if (it != sent_.end() &&
            (it->second.attempts > 0 || it->second.excluded || it->second.headroom_until > now_)) {
            return false;
        }
        return health_[d->index].block == Block::kNone;
    }

    // The stages the request still walks: from the last one it sent or waited in, onward; after
    // a semantic replacement, only the replacement's.
    std::vector<std::size_t> StagesAhead() const {
        std::vector<std::size_t> ahead;
        if (semantic_only_) {
            for (const std::size_t s : active_) {
                if (s >= last_stage_) ahead.push_back(s);
            }
            return ahead;
        }
        for (std::size_t s = last_stage_; s < stages_.size(); ++s) ahead.push_back(s);
        return ahead;
    }

    std::string Describe(const Action& a) const {
        std::ostringstream out;
        out << "action " << static_cast<int>(a.kind) << " at +"
            << std::chrono::duration_cast<milliseconds>(now_ - kT0).count() << " ms, deadline +"
            << std::chrono::duration_cast<milliseconds>(deadline_ - kT0).count() << " ms, "
            << attempts_ << "/" << policy_.max_attempts << " attempts";
        return out.str();
    }

    void Count(const AttemptState& state, const Action& a) {
        ++coverage_.actions[a.kind];
        if (a.kind == Kind::kSend && a.retry) ++coverage_.retries;
        if (a.kind == Kind::kSend && semantic_only_) ++coverage_.semantic_continuations;
        if (a.kind == Kind::kWait && a.wait_for == Action::WaitFor::kHeadroom)
            ++coverage_.headroom_waits;
        if (a.kind == Kind::kGiveUp && a.retry_after) ++coverage_.give_ups_with_retry_after;
        (void)state;
    }

    std::string Check(const AttemptState& state, const Action& a) {
        const std::string where = Describe(a);
        switch (a.kind) {
            case Kind::kSend: {
                const config::Deployment* d = state.targets[a.target].deployment;
                const Sent& sent = sent_[d];
                if (attempts_ >= policy_.max_attempts) return "send past max_attempts: " + where;
                if (now_ >= deadline_) return "send at or past the deadline: " + where;
                if (health_[d->index].block != Block::kNone)
                    return "send to a blocked deployment: " + where;
                if (now_ < sent.retry_after_until) return "send before retry-after: " + where;
                if (now_ < sent.headroom_until) return "send before headroom: " + where;
                if (sent.excluded) return "send to an excluded deployment: " + where;
                if (semantic_only_ && !semantic_.contains(d))
                    return "semantic outcome continued off the semantic chain: " + where;
                if (sent.attempts > 0) {
                    if (sent.last.action != policy::Action::kRetry)
                        return "retry of a non-retryable class: " + where;
                    if (!policy_.retries) return "retry of a client's own retry: " + where;
                    const ErrorClass c = sent.last.error_class;
                    if (retries_[stage_of_[d]][c] + 1 > policy_.class_retries[c])
                        return "retry past the class cap: " + where;
                    if (policy_.stage_retries &&
                        stage_retries_[stage_of_[d]] + 1 > *policy_.stage_retries)
                        return "retry past num_retries: " + where;
                }
                return "";
            }
            case Kind::kWait:
                if (a.wait < 1ms) return "a wait under 1 ms: " + where;
                if (a.wait_for == Action::WaitFor::kHeadroom &&
                    queue_full_.contains(stage_of_[state.targets[a.target].deployment]))
                    return "a wait for headroom after the lane's queue was full: " + where;
                if (now_ + a.wait >= deadline_) return "a wait past the deadline: " + where;
                if (attempts_ >= policy_.max_attempts)
                    return "a wait with no attempt left: " + where;
                return "";
            case Kind::kReplaceChain:
                if (last_outcome_.action != policy::Action::kContextFallback &&
                    last_outcome_.action != policy::Action::kContentFallback)
                    return "chain replaced without a semantic outcome: " + where;
                return "";
            case Kind::kPassThrough:
                if (last_outcome_.action != policy::Action::kGiveUp && !empty_replacement_)
                    return "pass-through of a retryable answer: " + where;
                return "";
            case Kind::kDone:
                if (last_outcome_.action != policy::Action::kSuccess)
                    return "done without an answer: " + where;
                return "";
            case Kind::kGiveUp:
                if (attempts_ < policy_.max_attempts && now_ < deadline_) {
                    for (const std::size_t s : StagesAhead()) {
                        for (const config::Deployment* d : stages_[s]) {
                            if (UntriedAndFree(d))
                                return "gave up with " + d->name + " untried and free: " + where;
                        }
                    }
                }
                if (a.retry_after && *a.retry_after <= 0ms)
                    return "a retry-after that has passed: " + where;
                return "";
        }
        return "";
    }

    std::mt19937_64 rng_;
    Coverage& coverage_;
    ChainBuilder builder_;
    EnginePolicy policy_;
    TimePoint now_ = kT0;
    TimePoint deadline_;
    std::vector<TargetHealth> health_;
    bool client_budget_ = true;
    std::vector<std::vector<const config::Deployment*>> stages_;  // every stage ever planned
    std::map<const config::Deployment*, std::size_t> stage_of_;
    std::map<const config::Deployment*, Sent> sent_;
    std::map<std::size_t, policy::ClassTable<int>> retries_;
    std::map<std::size_t, int> stage_retries_;
    const config::Deployment* last_sent_ = nullptr;
    std::size_t last_stage_ = 0;
    int attempts_ = 0;
    policy::Outcome last_outcome_;
    bool semantic_only_ = false;
    bool empty_replacement_ = false;
    std::set<const config::Deployment*> semantic_;
    std::set<std::size_t> queue_full_;  // stages whose lane queue refused a wait
    std::vector<std::size_t> active_;
};

TEST(DecidePropertyTest, InvariantsHoldOverRandomRequests) {
    const std::uint64_t runs = EnvOr("SWITCHYARD_ENGINE_RUNS", 30'000);
    const std::uint64_t seed = EnvOr("SWITCHYARD_ENGINE_SEED", 20261201);
    Coverage coverage;
    int failures = 0;
    for (std::uint64_t i = 0; i < runs && failures < 5; ++i) {
        const std::string broken = RandomRequest(seed + i, coverage).Go();
        if (!broken.empty()) {
            ++failures;
            ADD_FAILURE() << "seed " << seed + i << ": " << broken;
        }
    }
    std::printf(
        "%llu requests: %ld sends (%ld retries, %ld on a semantic chain), %ld waits (%ld for "
        "headroom), %ld chain replacements, %ld pass-throughs, %ld answers, %ld give-ups (%ld "
        "with retry-after)\n",
        static_cast<unsigned long long>(runs), coverage.actions[Kind::kSend], coverage.retries,
        coverage.semantic_continuations, coverage.actions[Kind::kWait], coverage.headroom_waits,
        coverage.actions[Kind::kReplaceChain], coverage.actions[Kind::kPassThrough],
        coverage.actions[Kind::kDone], coverage.actions[Kind::kGiveUp],
        coverage.give_ups_with_retry_after);
    // Every rule was reached often, so the invariants above were checked where they matter.
    if (runs >= 10'000) {
        for (const Kind k : {Kind::kSend, Kind::kWait, Kind::kReplaceChain, Kind::kPassThrough,
                             Kind::kDone, Kind::kGiveUp}) {
            EXPECT_GE(coverage.actions[k], 1000) << "action kind " << static_cast<int>(k);
        }
        EXPECT_GE(coverage.retries, 1000);
        EXPECT_GE(coverage.headroom_waits, 100);
        EXPECT_GE(coverage.semantic_continuations, 1000);
        EXPECT_GE(coverage.give_ups_with_retry_after, 1000);
    }
}

}  // namespace decide_property_test
}  // namespace switchyard::engine
