#include "engine/decide.h"

#include <algorithm>
#include <utility>

namespace switchyard::engine {

AttemptState::AttemptState(EnginePolicy p, const std::vector<Stage>& chain, TimePoint d)
    : policy(p), deadline(d) {
    Append(chain);
}

void AttemptState::Append(const std::vector<Stage>& chain) {
    for (const Stage& stage : chain) {
        StageState s;
        s.group = stage.group;
        s.first_target = targets.size();
        s.target_count = stage.deployments.size();
        for (const config::Deployment* deployment : stage.deployments) {
            Target t;
            t.deployment = deployment;
            t.stage = stages.size();
            targets.push_back(t);
        }
        stages.push_back(s);
    }
}

namespace {

using Block = TargetHealth::Block;
using Kind = Action::Kind;

const TargetHealth& Health(const World& world, const Target& t) {
    return world.health[t.deployment->index];
}

// What holds target `i` back, as this request sees it: in a panic its least-bad benched target
// is not held back by its bench.
Block BlockOf(const AttemptState& s, const World& world, std::size_t i) {
    if (s.panic_target == i) return Block::kNone;
    return Health(world, s.targets[i]).block;
}

// May target `i` be sent to now, as far as health and this request know?
bool Free(const AttemptState& s, const World& world, std::size_t i) {
    const Target& t = s.targets[i];
    return !t.excluded && BlockOf(s, world, i) == Block::kNone &&
           t.retry_after_until <= world.now && t.headroom_until <= world.now;
}

// The attempt's share of the rest of the deadline: what is left after every other stage that
// could serve now — the later ones, or another deployment of this one — gets what it needs (its
// expected time before content when its history says, else an equal share). Sets `last_resort`
// when nothing could follow it. `running`: a target whose attempt is in flight (a hedge's), no
// later resort.
milliseconds Budget(const AttemptState& s, const World& world, std::size_t index, bool& last_resort,
                    std::optional<std::size_t> running = std::nullopt) {
    const milliseconds rest =
        std::max(milliseconds(1), std::chrono::ceil<milliseconds>(s.deadline - world.now));
    last_resort = s.attempts + 1 >= s.policy.max_attempts;
    int others = 0;
    int unknown = 0;
    milliseconds known{0};
    for (std::size_t st = s.stage; st < s.stages.size() && !last_resort; ++st) {
        const StageState& stage = s.stages[st];
        for (std::size_t i = stage.first_target; i < stage.first_target + stage.target_count; ++i) {
            if (i == index || i == running || s.targets[i].attempts > 0 || !Free(s, world, i)) {
                continue;
            }
            ++others;
            if (const auto expected = Health(world, s.targets[i]).expected) {
                known += *expected;
            } else {
                ++unknown;
            }
            break;  // one attempt per stage
        }
    }
    if (last_resort || others == 0) {
        last_resort = true;
        return rest;
    }
    const milliseconds share = rest / (others + 1);
    return std::max(share, rest - known - unknown * share);
}

Action Send(AttemptState& s, const World& world, std::size_t index, bool retry) {
    // A retry counts against its caps when it goes upstream (Record), not when it is chosen: a
    // send that finds no headroom or loses its probe slot spends nothing.
    s.sent = index;
    s.sent_retry = retry;
    Action a;
    a.kind = Kind::kSend;
    a.target = index;
    a.retry = retry;
    a.budget = Budget(s, world, index, a.last_resort);
    a.panic = s.panic_target == index;
    s.sent_last_resort = a.last_resort;
    return a;
}

// Whether every target of the rest of the chain that is not ruled out for this request is
// benched; then the least-bad of them that still answers some calls is tried anyway
// (docs/resilience.md#a-bench-is-a-preference) — once per request whatever the retry budget
// says (one try, as a client alone would make), more often only while it allows retries.
std::optional<std::size_t> PanicTarget(const AttemptState& s, const World& world) {
    if (s.stage >= s.stages.size()) return std::nullopt;
    std::optional<std::size_t> best;
    double best_share = 0;
    for (std::size_t i = s.stages[s.stage].first_target; i < s.targets.size(); ++i) {
        const Target& t = s.targets[i];
        if (t.excluded) continue;
        const TargetHealth& h = Health(world, t);
        if (h.block != Block::kSick) return std::nullopt;  // something else can serve or wait
        if (h.panic > best_share && (h.retry_budget || t.attempts == 0)) {
            best = i;
            best_share = h.panic;
        }
    }
    return best;
}

Action Simple(Kind kind) {
    Action a;
    a.kind = kind;
    return a;
}

// May the tried target `t` be sent to again (caps and budgets; timing aside)?
bool MayRetry(const AttemptState& s, const StageState& stage, const Target& t,
              const TargetHealth& h, const World& world) {
    if (!s.policy.retries || t.excluded || t.attempts == 0) return false;
    if (stage.retries_by_class[t.last_class] >= s.policy.class_retries[t.last_class]) return false;
    if (s.policy.stage_retries && stage.retries >= *s.policy.stage_retries) return false;
    return h.retry_budget && world.client_retry_budget;
}

// Later stages with an untried target that could serve now: each needs one attempt.
int StagesAheadThatCanServe(const AttemptState& s, const World& world) {
    int ahead = 0;
    for (std::size_t i = s.stage + 1; i < s.stages.size(); ++i) {
        const StageState& stage = s.stages[i];
        for (std::size_t t = stage.first_target; t < stage.first_target + stage.target_count; ++t) {
            if (s.targets[t].attempts == 0 && Free(s, world, t)) {
                ++ahead;
                break;
            }
        }
    }
    return ahead;
}

// The current stage's next action, or nullopt when it has nothing left that fits. Sets
// `deadline_bound` when only the deadline stood in the way.
std::optional<Action> ChooseInStage(AttemptState& s, const World& world, bool& deadline_bound) {
    StageState& stage = s.stages[s.stage];
    const TimePoint now = world.now;
    const std::size_t first = stage.first_target;
    const std::size_t end = first + stage.target_count;
    for (std::size_t i = first; i < end; ++i) {
        if (s.targets[i].attempts == 0 && Free(s, world, i)) return Send(s, world, i, false);
    }

    // The soonest wait-then-send of the stage.
    std::optional<std::size_t> best;
    TimePoint best_at = TimePoint::max();
    TimePoint best_backoff{};
    Action::WaitFor best_for = Action::WaitFor::kRateLimit;
    for (std::size_t i = first; i < end; ++i) {
        const Target& t = s.targets[i];
        const TargetHealth& h = Health(world, s.targets[i]);
        const Block block = BlockOf(s, world, i);
        if (t.excluded || block == Block::kSick) continue;  // sick is no known instant
        const bool retry = t.attempts > 0;
        TimePoint rate_limit = t.retry_after_until;
        if (block == Block::kRateLimited) rate_limit = std::max(rate_limit, h.until);
        TimePoint backoff{};
        if (retry) {
            if (!MayRetry(s, stage, t, h, world)) continue;
            backoff =
                t.retry_at.value_or(now + s.policy.backoff.Jittered(stage.retries, world.uniform));
        } else if (rate_limit > now && !s.policy.retries) {
            continue;  // a client's own retry does not wait for a rate limit inside the gateway
        }
        const TimePoint at = std::max({rate_limit, t.headroom_until, backoff, now});
        const bool headroom_binds = t.headroom_until > now && at == t.headroom_until;
        if (headroom_binds && stage.queue_full) continue;
        if (at < best_at) {
            best = i;
            best_at = at;
            best_backoff = backoff;
            best_for = headroom_binds           ? Action::WaitFor::kHeadroom
                       : retry && at == backoff ? Action::WaitFor::kBackoff
                                                : Action::WaitFor::kRateLimit;
        }
    }
    if (!best) return std::nullopt;

    const milliseconds wait = std::chrono::ceil<milliseconds>(best_at - now);
    if (now + wait >= s.deadline) {
        deadline_bound = true;  // a wait that would end at or past the deadline is not started
        return std::nullopt;
    }
    if (!s.policy.stage_retries) {
        // Leave what the later stages that could serve now need: an attempt each, and time for
        // an attempt as long as the last one.
        if (const int ahead = StagesAheadThatCanServe(s, world); ahead > 0) {
            if (s.attempts + 1 + ahead > s.policy.max_attempts) return std::nullopt;
            if (now + wait + (1 + ahead) * s.attempt_estimate >= s.deadline) return std::nullopt;
        }
    }
    Target& chosen = s.targets[*best];
    if (wait <= milliseconds(0)) return Send(s, world, *best, chosen.attempts > 0);
    if (chosen.attempts > 0) chosen.retry_at = best_backoff;
    Action a;
    a.kind = Kind::kWait;
    a.target = *best;
    a.wait = wait;
    a.wait_for = best_for;
    return a;
}

Action GiveUp(const AttemptState& s, GiveUpReason reason, const World& world) {
    Action a = Simple(Kind::kGiveUp);
    a.reason = reason;
    const TimePoint now = world.now;
    TimePoint earliest = TimePoint::max();
    bool all_blocked = !s.targets.empty();
    bool rate_limited_only = true;
    for (std::size_t i = 0; i < s.targets.size(); ++i) {
        const Target& t = s.targets[i];
        const TargetHealth& h = Health(world, s.targets[i]);
        TimePoint until = std::max(t.retry_after_until, t.headroom_until);
        if (h.block != Block::kNone) until = std::max(until, h.until);
        if (until <= now) {
            all_blocked = false;
            continue;
        }
        earliest = std::min(earliest, until);
        if (h.block == Block::kSick) rate_limited_only = false;
        if (t.headroom_until > now) {
            const milliseconds wait = std::chrono::ceil<milliseconds>(t.headroom_until - now);
            a.headroom_short_for = std::min(a.headroom_short_for.value_or(wait), wait);
        }
    }
    if (all_blocked) a.retry_after = std::chrono::ceil<milliseconds>(earliest - now);
    a.rate_limited = all_blocked && rate_limited_only;
    if (s.attempts > 0) a.headroom_short_for.reset();
    return a;
}

Action Choose(AttemptState& s, const World& world) {
    if (s.attempts >= s.policy.max_attempts) return GiveUp(s, GiveUpReason::kAttempts, world);
    if (world.now >= s.deadline) return GiveUp(s, GiveUpReason::kDeadline, world);
    s.panic_target = PanicTarget(s, world);
    bool deadline_bound = false;
    for (; s.stage < s.stages.size(); ++s.stage) {
        if (auto action = ChooseInStage(s, world, deadline_bound)) return *action;
    }
    return GiveUp(s, deadline_bound ? GiveUpReason::kDeadline : GiveUpReason::kExhausted, world);
}

// Records the outcome of an attempt on `t` that ended at `ended`; an action when the outcome
// alone decides it. `last_resort`: it was the chain's last resort.
std::optional<Action> RecordOn(AttemptState& s, Target& t, const policy::Outcome& outcome,
                               TimePoint ended, bool cut, bool last_resort) {
    t.retry_at.reset();
    ++s.attempts;
    ++t.attempts;
    t.last_class = outcome.error_class;
    if (outcome.retry_after) {
        t.retry_after_until = std::max(t.retry_after_until, ended + *outcome.retry_after);
    }
    switch (outcome.action) {
        case policy::Action::kSuccess:
            return Simple(Kind::kDone);
        case policy::Action::kGiveUp:
            return Simple(Kind::kPassThrough);
        case policy::Action::kContextFallback:
        case policy::Action::kContentFallback: {
            Action a = Simple(Kind::kReplaceChain);
            a.semantic = outcome.action;
            return a;
        }
        case policy::Action::kFailOver:
            t.excluded = true;
            break;
        case policy::Action::kRetry:
            // Cut by its limits while the chain could still serve: trying it again would cost as
            // much again, so the rest of the chain goes first.
            if (cut && !last_resort) t.excluded = true;
            break;
    }
    return std::nullopt;
}

// Records an attempt's outcome, and its hedge's; an action when the outcomes alone decide it.
std::optional<Action> Record(AttemptState& s, const event::Attempted& e) {
    const std::optional<std::size_t> hedge = std::exchange(s.hedge, std::nullopt);
    if (!s.sent) return std::nullopt;
    Target& t = s.targets[*s.sent];
    s.sent.reset();
    if (s.sent_retry) {
        StageState& stage = s.stages[t.stage];
        ++stage.retries_by_class[t.last_class];
        ++stage.retries;
    }
    s.sent_retry = false;
    s.attempt_estimate =
        std::max(milliseconds(0), std::chrono::ceil<milliseconds>(e.ended - e.started));
    std::optional<Action> decided = RecordOn(s, t, e.outcome, e.ended, e.cut, s.sent_last_resort);
    if (hedge && e.hedge) {
        std::optional<Action> hedged = RecordOn(s, s.targets[*hedge], e.hedge->outcome, e.ended,
                                                e.hedge->cut, s.hedge_last_resort);
        if (!decided) decided = hedged;
    }
    return decided;
}

// Semantic fallbacks replace the rest of the chain and the current stage: the same prompt would
// fail the same way anywhere else in it.
std::optional<Action> Record(AttemptState& s, const event::ChainReplaced& e) {
    if (e.stages.empty()) return Simple(Kind::kPassThrough);
    const std::size_t next = s.stage + 1;
    if (next < s.stages.size()) {
        s.targets.resize(s.stages[next].first_target);
        s.stages.resize(next);
    }
    s.Append(e.stages);
    s.stage = next;
    return std::nullopt;
}

}  // namespace

std::optional<Action> Hedge(AttemptState& s, const World& world) {
    if (!s.sent || s.hedge || world.now >= s.deadline) return std::nullopt;
    if (s.attempts + 2 >= s.policy.max_attempts) return std::nullopt;  // one left after both
    if (s.stage >= s.stages.size()) return std::nullopt;
    for (std::size_t i = s.stages[s.stage].first_target; i < s.targets.size(); ++i) {
        if (i == *s.sent || s.targets[i].attempts > 0 || !Free(s, world, i)) continue;
        s.hedge = i;
        Action a;
        a.kind = Kind::kSend;
        a.target = i;
        // With nothing after it but the attempt it hedges, it is the chain's last resort: the
        // rest of the deadline and the configured limits.
        a.budget = Budget(s, world, i, a.last_resort, s.sent);
        s.hedge_last_resort = a.last_resort;
        return a;
    }
    return std::nullopt;
}

Action Decide(AttemptState& s, Event event, const World& world) {
    std::optional<Action> decided;
    if (auto* attempted = std::get_if<event::Attempted>(&event)) {
        decided = Record(s, *attempted);
    } else if (auto* replaced = std::get_if<event::ChainReplaced>(&event)) {
        decided = Record(s, *replaced);
    } else if (const auto* no_headroom = std::get_if<event::NoHeadroom>(&event)) {
        if (s.sent) {
            // Headroom that may never come (a cost over the bucket) reads as a day: any wait past
            // the deadline is the same to the engine, and the instant must not overflow.
            s.targets[*s.sent].headroom_until =
                world.now + std::clamp(no_headroom->wait, milliseconds(1),
                                       milliseconds(std::chrono::hours(24)));
        }
        s.sent.reset();
        s.sent_retry = false;
        s.hedge.reset();
    } else if (std::holds_alternative<event::NotAdmitted>(event)) {
        s.hedge.reset();
        if (s.sent) s.targets[*s.sent].excluded = true;
        s.sent.reset();
        s.sent_retry = false;
    } else if (std::holds_alternative<event::QueueFull>(event)) {
        if (s.stage < s.stages.size()) s.stages[s.stage].queue_full = true;
    }
    if (decided) return *decided;
    return Choose(s, world);
}

}  // namespace switchyard::engine
