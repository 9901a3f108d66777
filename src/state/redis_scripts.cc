#include "state/redis_scripts.h"

#include <openssl/sha.h>

#include <array>

namespace switchyard::state {
namespace {

std::string Sha1Hex(std::string_view text) {
    std::array<unsigned char, SHA_DIGEST_LENGTH> digest{};
    SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(digest.size() * 2);
    for (const unsigned char byte : digest) {
        hex += kHex[byte >> 4];
        hex += kHex[byte & 0xf];
    }
    return hex;
}

// The server's time in ms (fractional), the one clock every replica shares.
#define SY_LUA_NOW                   \
    "local t = redis.call('TIME')\n" \
    "local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000\n"

// A sliding window as the in-process one counts it (limits/sliding_window.h): slots of `slot_ms`,
// the current one and `slots` before it, expired ones deleted as they are read.
constexpr std::string_view kKeyAdmit = SY_LUA_NOW R"lua(
now = math.floor(now)
local rpm, tpm = tonumber(ARGV[1]), tonumber(ARGV[2])
local tokens, budget = tonumber(ARGV[3]), tonumber(ARGV[4])
local slot_ms, slots = tonumber(ARGV[5]), tonumber(ARGV[6])
local slot = math.floor(now / slot_ms)
local oldest = slot - slots
local ttl = (slots + 2) * slot_ms
local function window(key)
  local fields = redis.call('HGETALL', key)
  local live, total = {}, 0
  for i = 1, #fields, 2 do
    local s, c = tonumber(fields[i]), tonumber(fields[i + 1])
    if s < oldest then
      redis.call('HDEL', key, fields[i])
    else
      total = total + c
      live[#live + 1] = {s, c}
    end
  end
  return total, live
end
-- How long until enough old slots leave the window for `cost` to fit: slot s leaves when the
-- current slot passes s + slots.
local function wait(total, live, cost, limit)
  table.sort(live, function(a, b) return a[1] < b[1] end)
  local excess = total + cost - limit
  for _, e in ipairs(live) do
    excess = excess - e[2]
    if excess <= 0 then return (e[1] + slots + 1) * slot_ms - now end
  end
  return (slot + slots + 1) * slot_ms - now
end
if budget > 0 then
  local spent = tonumber(redis.call('GET', KEYS[3]) or '0')
  if spent >= budget then return {3, 0, slot, 0} end
end
if rpm > 0 then
  local total, live = window(KEYS[1])
  if total + 1 > rpm then return {1, wait(total, live, 1, rpm), slot, 0} end
end
local counted = 0
if tpm > 0 then
  counted = math.max(0, math.min(tokens, tpm))
  local total, live = window(KEYS[2])
  if total + counted > tpm then return {2, wait(total, live, counted, tpm), slot, 0} end
  redis.call('HINCRBY', KEYS[2], slot, counted)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
if rpm > 0 then
  redis.call('HINCRBY', KEYS[1], slot, 1)
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return {0, 0, slot, counted}
)lua";

constexpr std::string_view kKeySettle = R"lua(
local delta = tonumber(ARGV[2])
if delta ~= 0 then
  local c = redis.call('HGET', KEYS[1], ARGV[1])
  if c then redis.call('HSET', KEYS[1], ARGV[1], math.max(0, tonumber(c) + delta)) end
end
if tonumber(ARGV[3]) > 0 then
  redis.call('INCRBYFLOAT', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return 1
)lua";

// Token buckets as the in-process ones behave (limits/token_bucket.h): continuous refill at
// capacity per period, debt allowed, a cost above capacity - floor fits only a full bucket, a take
// from a full bucket holds its refill back for the demand's transit time. Levels are stored with
// the instant they start refilling from (which may lie ahead).
constexpr std::string_view kHeadroom = SY_LUA_NOW R"lua(
local reserve = ARGV[1] == '1'
local buckets, fields = {}, {}
for i = 2, #ARGV, 7 do
  buckets[#buckets + 1] = {name = ARGV[i], cap = tonumber(ARGV[i + 1]),
                           period = tonumber(ARGV[i + 2]), need = tonumber(ARGV[i + 3]),
                           take = tonumber(ARGV[i + 4]), floor = tonumber(ARGV[i + 5]),
                           transit = tonumber(ARGV[i + 6])}
  fields[#fields + 1] = ARGV[i] .. ':l'
  fields[#fields + 1] = ARGV[i] .. ':t'
end
local stored = redis.call('HMGET', KEYS[1], unpack(fields))
for k, b in ipairs(buckets) do
  local level, at = tonumber(stored[2 * k - 1] or ''), tonumber(stored[2 * k] or '')
  if level == nil or at == nil then level, at = b.cap, now end
  if now > at then level = level + (now - at) * b.cap / b.period end
  b.level = math.min(level, b.cap)
  b.at = math.max(at, now)
end
if reserve then
  local wait = 0
  for _, b in ipairs(buckets) do
    local short
    if b.need > b.cap - b.floor then short = b.cap - b.level else short = b.floor + b.need - b.level end
    if short > 1e-9 * b.cap then wait = math.max(wait, math.ceil(short * b.period / b.cap)) end
  end
  if wait > 0 then return wait end
end
local update = {}
for _, b in ipairs(buckets) do
  update[#update + 1] = b.name .. ':l'
  update[#update + 1] = math.min(b.level - b.take, b.cap)
  local at = b.at
  if b.take > 0 and b.transit > 0 and b.level >= b.cap * (1 - 1e-9) then at = now + b.transit end
  update[#update + 1] = b.name .. ':t'
  update[#update + 1] = at
end
redis.call('HSET', KEYS[1], unpack(update))
redis.call('PEXPIRE', KEYS[1], 3600000)
return 0
)lua";

constexpr std::string_view kHeadroomCorrect = SY_LUA_NOW R"lua(
for i = 1, #ARGV, 4 do
  local name, cap, period = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local remaining = tonumber(ARGV[i + 3])
  local level = tonumber(redis.call('HGET', KEYS[1], name .. ':l') or '')
  local at = tonumber(redis.call('HGET', KEYS[1], name .. ':t') or '')
  if level == nil or at == nil then level, at = cap, now end
  if now > at then level = level + (now - at) * cap / period end
  level = math.min(level, cap, remaining)
  redis.call('HSET', KEYS[1], name .. ':l', level, name .. ':t', math.max(at, now))
end
redis.call('PEXPIRE', KEYS[1], 3600000)
return 0
)lua";

// Only a take that succeeds extends the slots' life: refused takes must not keep alive a count
// whose holder died or whose release was lost, or the deployment would never be probed again.
constexpr std::string_view kProbeTake = R"lua(
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
)lua";

constexpr std::string_view kIdempotencyClaim = R"lua(
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], 'P' .. ARGV[1], 'PX', ARGV[2])
return ''
)lua";

constexpr std::string_view kIdempotencyRelease = R"lua(
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 1) == 'P' and string.sub(v, 2) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
)lua";

constexpr std::string_view kProbeRelease = R"lua(
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n <= 1 then redis.call('DEL', KEYS[1]) else redis.call('DECR', KEYS[1]) end
return 1
)lua";

constexpr std::string_view kMarkSet = R"lua(
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
end
return 1
)lua";

constexpr std::string_view kMarksRead = R"lua(
local out = {}
for _, k in ipairs(KEYS) do
  out[#out + 1] = redis.call('PTTL', k)
  out[#out + 1] = redis.call('GET', k) or ''
end
return out
)lua";

#undef SY_LUA_NOW

}  // namespace

const RedisScript& KeyAdmitScript() {
    static const RedisScript script{kKeyAdmit, Sha1Hex(kKeyAdmit)};
    return script;
}
const RedisScript& KeySettleScript() {
    static const RedisScript script{kKeySettle, Sha1Hex(kKeySettle)};
    return script;
}
const RedisScript& HeadroomScript() {
    static const RedisScript script{kHeadroom, Sha1Hex(kHeadroom)};
    return script;
}
const RedisScript& HeadroomCorrectScript() {
    static const RedisScript script{kHeadroomCorrect, Sha1Hex(kHeadroomCorrect)};
    return script;
}
const RedisScript& ProbeTakeScript() {
    static const RedisScript script{kProbeTake, Sha1Hex(kProbeTake)};
    return script;
}
const RedisScript& IdempotencyClaimScript() {
    static const RedisScript script{kIdempotencyClaim, Sha1Hex(kIdempotencyClaim)};
    return script;
}
const RedisScript& IdempotencyReleaseScript() {
    static const RedisScript script{kIdempotencyRelease, Sha1Hex(kIdempotencyRelease)};
    return script;
}
const RedisScript& ProbeReleaseScript() {
    static const RedisScript script{kProbeRelease, Sha1Hex(kProbeRelease)};
    return script;
}
const RedisScript& MarkSetScript() {
    static const RedisScript script{kMarkSet, Sha1Hex(kMarkSet)};
    return script;
}
const RedisScript& MarksReadScript() {
    static const RedisScript script{kMarksRead, Sha1Hex(kMarksRead)};
    return script;
}

}  // namespace switchyard::state
