#include "state/redis_keys.h"

#include <fmt/format.h>

namespace switchyard::state {

std::string RedisKeys::Key(std::string_view tag, std::string_view suffix) const {
    return fmt::format("{}{{{}}}:{}", prefix, tag, suffix);
}

std::string RedisKeys::Deployment(std::string_view deployment, std::string_view suffix) const {
    return Key(fmt::format("d:{}", deployment), suffix);
}

std::string RedisKeys::Client(std::string_view key_hash, std::string_view suffix) const {
    return Key(fmt::format("k:{}", key_hash.substr(0, 32)), suffix);
}

std::string RedisKeys::Idempotency(std::string_view key) const {
    return Key(fmt::format("i:{}", key), "answer");
}

}  // namespace switchyard::state
