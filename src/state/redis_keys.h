#pragma once

#include <string>
#include <string_view>

namespace switchyard::state {

// The names of Switchyard's keys in Redis (docs/state.md#what-is-shared-and-how-exactly). Every key
// of one script shares one hash tag, so the scripts run unchanged on Redis Cluster.
struct RedisKeys {
    std::string prefix;  // state.key_prefix

    // prefix + "{tag}:" + suffix.
    std::string Key(std::string_view tag, std::string_view suffix) const;
    // A deployment's: headroom, probes, and its marks (rate_limited, cooling, breaker_open,
    // disabled; their value is the reason, their TTL the time left).
    std::string Deployment(std::string_view deployment, std::string_view suffix) const;
    // A client key's (by its SHA-256, of which the tag keeps 32 digits): requests, tokens,
    // spend:YYYY-MM.
    std::string Client(std::string_view key_hash, std::string_view suffix) const;
    // An idempotency key's answer ('P', 'D' or 'U', the fingerprint, then the encoded answer).
    std::string Idempotency(std::string_view key) const;
    // The hashes of the keys added at run time (name -> the admin API's body), and of those
    // removed (name -> 1).
    std::string RuntimeKeys() const { return Key("keys", "runtime"); }
    std::string RemovedKeys() const { return Key("keys", "removed"); }
};

}  // namespace switchyard::state
