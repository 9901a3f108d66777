#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "state/durable_store.h"

namespace switchyard::state {

// What outlives a process, read from the fleet's Redis and written to it
// (docs/state.md#backups-and-moves): `switchyard state export|import` with `backend: redis`, to
// back it up or to move between Redis and the SQLite store. One blocking connection (TLS as
// configured), no gateway needed. Read: the keys added at run time, each key's spend per month
// (`key_hashes` — the config's keys' SHA-256 — and the runtime keys' own name the keys whose spend
// Redis holds under a shortened hash; spend of a key neither knows is left out, and counted in
// `unknown_spend`), the deployments' marks with the time they have left, and the idempotency
// keys' answers (claims in flight are not kept). Redis keeps no tokens or requests per month: they
// read 0. Written: the same, each with its expiry, over what Redis holds under the same names
// (nothing else is deleted: a fleet's store is never emptied). Throws StoreError.
struct RedisRead {
    StoreContents contents;
    std::size_t unknown_spend = 0;
};
RedisRead ReadFromRedis(const config::StateConfig& config,
                        const std::vector<std::string>& key_hashes, std::int64_t now_ms);
void WriteToRedis(const config::StateConfig& config, const StoreContents& contents,
                  std::int64_t now_ms);

}  // namespace switchyard::state
