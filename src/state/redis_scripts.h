#pragma once

#include <string>
#include <string_view>

namespace switchyard::state {

// A Lua script that Redis runs atomically (EVALSHA, or EVAL when the server does not have it
// cached). Every key a script touches is passed in KEYS and shares one hash tag, so the scripts
// also run on Redis Cluster. Time comes from the server's TIME: replicas share no clock.
struct RedisScript {
    std::string_view source;
    std::string sha1;  // lowercase hex, as EVALSHA wants it
};

// Client keys' sliding windows (docs/state.md#what-is-shared-and-how-exactly). KEYS: the request
// window, the token window, this month's spend. ARGV: rpm limit, tpm limit (0: none), tokens,
// monthly budget (0: none), slot length in ms, slots per window. Returns {verdict, retry_after_ms,
// slot, counted}: verdict 0 admitted, 1 requests, 2 tokens, 3 budget spent.
const RedisScript& KeyAdmitScript();
// KEYS: the token window, this month's spend. ARGV: slot, token delta, cost, spend TTL in ms.
const RedisScript& KeySettleScript();

// Shared headroom buckets (docs/state.md#what-is-shared-and-how-exactly). KEYS: the deployment's
// bucket hash. ARGV: a reservation flag (1: reserve, 0: only adjust), then per bucket: name,
// capacity, refill period in ms, cost, floor. Reserve: takes every cost when each bucket stays at
// or above its floor after taking (a cost larger than capacity - floor fits a full bucket) and
// returns 0; otherwise takes nothing and returns the ms until all would fit. Adjust: adds -cost to
// each bucket (a negative cost gives back), capped at capacity, and returns 0.
const RedisScript& HeadroomScript();
// KEYS: the bucket hash. ARGV: per bucket: name, capacity, refill period ms, reported remaining.
// Lowers each bucket's level to the provider's report (never raises it).
const RedisScript& HeadroomCorrectScript();

// Half-open probes across replicas. KEYS: the probe counter. ARGV: limit, TTL in ms. Returns 1
// when a probe slot was taken.
const RedisScript& ProbeTakeScript();
// KEYS: the probe counter. Frees one slot.
const RedisScript& ProbeReleaseScript();

// Idempotency keys (docs/state.md#idempotency-keys). A key's value is 'P' + fingerprint while its
// request runs, 'D' + fingerprint + the encoded answer once it ran, 'U' + fingerprint when it
// ran and its answer was too large to keep. Claim: KEYS: the key. ARGV: fingerprint, lease in
// ms. Returns the value, or '' when it was free and is now claimed.
const RedisScript& IdempotencyClaimScript();
// KEYS: the key. ARGV: fingerprint. Frees a claim that is still in flight.
const RedisScript& IdempotencyReleaseScript();

// Health marks. KEYS: the mark. ARGV: ms it lasts, value. Sets it unless it already lasts longer.
const RedisScript& MarkSetScript();
// KEYS: a deployment's marks (rate_limited, cooling, breaker_open, disabled). Returns, per key,
// {ms left (-2: none), value}.
const RedisScript& MarksReadScript();

}  // namespace switchyard::state
