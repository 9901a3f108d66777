#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchyard::answers {

// What identifies a request body for an idempotency key: the SHA-256 of its route and bytes.
// The same key with another fingerprint is another request (422).
std::string Fingerprint(std::string_view route, std::string_view body);

// The response cache's key (docs/answers.md#response-cache): the SHA-256 of the model group, the
// route, the client's scope (its key; empty when the group shares answers across keys) and the
// body in canonical form: object members sorted, whitespace and number spelling normalised, and
// the fields that do not change the answer (`user`, `metadata`) left out. `stream` stays: a
// cached stream answers streams, a cached body answers bodies. nullopt when the body is not a
// JSON object.
std::optional<std::string> CacheKey(std::string_view group, std::string_view route,
                                    std::string_view scope, std::string_view body);

// `body` (a JSON value) in canonical form, as CacheKey reads it; nullopt when not JSON.
std::optional<std::string> CanonicalJson(std::string_view body);

}  // namespace switchyard::answers
