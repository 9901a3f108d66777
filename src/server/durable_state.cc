#include "server/durable_state.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <charconv>
#include <unordered_map>

#include "answers/stored_answer.h"
#include "config/key_request.h"

namespace switchyard::server {
namespace {

// Spend is written at most this often; a `kill -9` loses at most what was spent since.
constexpr std::chrono::milliseconds kFlushInterval{1000};

std::int64_t UnixMillis(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

std::string MonthName(int month) { return fmt::format("{:04}-{:02}", month / 12, month % 12 + 1); }

int MonthIndex(std::string_view name) {
    int year = 0, month = 0;
    if (name.size() != 7 || name[4] != '-') return -1;
    if (std::from_chars(name.data(), name.data() + 4, year).ec != std::errc() ||
        std::from_chars(name.data() + 5, name.data() + 7, month).ec != std::errc() || month < 1 ||
        month > 12) {
        return -1;
    }
    return year * 12 + month - 1;
}

DurableState::DurableState(const config::StateConfig& config, std::size_t max_answer_bytes,
                           observe::Metrics& metrics, const core::Clock& clock)
    : clock_(clock),
      writer_(std::make_unique<state::DurableStore>(config.path, max_answer_bytes), metrics, clock,
              kFlushInterval) {}

DurableState::Restored DurableState::Restore(const config::Config& config, limits::ClientKeys& keys,
                                             const Runtime& runtime,
                                             answers::IdempotencyStore* idempotency) {
    Restored restored;
    const auto wall_now = clock_.WallNow();
    const auto now = clock_.Now();
    const std::int64_t now_ms = UnixMillis(wall_now);
    // Read on this thread before the writer starts: the store has one user at a time.
    const state::StoreContents contents = writer_.Read(now_ms);
    for (const state::StoredKey& stored : contents.keys) {
        auto parsed = config::ParseKeyRequest(stored.body, config);
        auto* request = std::get_if<config::KeyRequest>(&parsed);
        std::string why;
        if (request == nullptr || !keys.Add(std::move(request->key), why)) {
            // A key the config now names, or one its lane or models no longer allow.
            fmt::print(stderr,
                       "switchyard: state store {}: key '{}' added at run time is not "
                       "restored: {}\n",
                       Path(), stored.name,
                       request == nullptr ? std::get<core::LocalError>(parsed).message : why);
            continue;
        }
        ++restored.keys;
    }
    std::unordered_map<std::string, std::shared_ptr<limits::ClientKeyState>> by_hash;
    for (auto& key : keys.List()) by_hash.emplace(key->Policy().sha256, key);
    for (const state::StoredSpend& spend : contents.spend) {
        const auto it = by_hash.find(spend.key_sha256);
        const int month = MonthIndex(spend.month);
        if (it == by_hash.end() || month < 0) continue;
        it->second->Restore({month, spend.spent, spend.tokens, spend.requests}, wall_now);
        ++restored.spend;
    }
    for (const state::StoredMark& mark : contents.marks) {
        const auto index = FindDeployment(config, mark.deployment);
        const auto kind = routing::HealthChangeKind(mark.kind);
        if (!index || !kind) continue;
        routing::HealthChange change{*kind, std::chrono::milliseconds(mark.until_ms - now_ms),
                                     mark.reason};
        runtime.health->Apply(*index, change, now);
        ++restored.marks;
    }
    if (idempotency != nullptr) {
        for (const state::StoredIdempotency& kept : contents.idempotency) {
            std::shared_ptr<const answers::StoredAnswer> answer;
            if (kept.has_answer) {
                auto decoded = answers::Decode(kept.answer);
                if (!decoded) continue;
                answer = std::make_shared<const answers::StoredAnswer>(std::move(*decoded));
            }
            const auto remaining = std::chrono::milliseconds(kept.expires_ms - now_ms);
            if (idempotency->Claim(kept.key, kept.tenant, kept.fingerprint, now, remaining).state !=
                answers::KeyState::kClaimed) {
                continue;
            }
            idempotency->Complete(kept.key, std::move(answer), now + remaining);
            ++restored.answers;
        }
    }
    return restored;
}

void DurableState::Start(limits::ClientKeys& keys) {
    writer_.Start([&keys](state::StoreBatch& batch, bool failed) {
        for (const auto& key : keys.List()) {
            if (const auto totals = key->TakeUnsaved(failed)) {
                batch.spend.push_back({key->Policy().sha256, MonthName(totals->month),
                                       totals->spent, totals->tokens, totals->requests});
            }
        }
    });
}

void DurableState::HealthChanged(std::string_view deployment, const routing::HealthChange& change) {
    using Kind = routing::HealthChange::Kind;
    const std::int64_t until = UnixMillis(clock_.WallNow()) + change.remaining.count();
    state::StoreBatch batch;
    const std::string name(deployment);
    switch (change.kind) {
        case Kind::kRateLimited:
        case Kind::kCooling:
        case Kind::kBreakerOpen:
        case Kind::kDisabled:
            if (change.remaining.count() <= 0) return;
            batch.marks.push_back(
                {name, std::string(routing::Name(change.kind)), until, change.reason});
            break;
        case Kind::kBreakerClosed:
            batch.marks.push_back({name, "breaker_open", 0, {}});
            break;
        case Kind::kEnabled:
            batch.marks.push_back({name, "", 0, {}});
            break;
    }
    // A disable (a spend cap) and an operator's re-enable are written at once; cooldowns and
    // rate limits go with the next write.
    if (change.kind == Kind::kDisabled || change.kind == Kind::kEnabled) {
        writer_.WriteNow(std::move(batch), nullptr);
    } else {
        writer_.Enqueue(std::move(batch));
    }
}

asio::awaitable<bool> DurableState::Write(state::StoreBatch batch) {
    auto initiate = [this](auto handler, state::StoreBatch changes) {
        auto home = asio::get_associated_executor(handler);
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        writer_.WriteNow(std::move(changes), [shared, home](bool written) {
            asio::post(home, [shared, written]() mutable { std::move (*shared)(written); });
        });
    };
    co_return co_await asio::async_initiate<const asio::use_awaitable_t<>, void(bool)>(
        initiate, asio::use_awaitable, std::move(batch));
}

asio::awaitable<std::optional<std::string>> DurableState::Export() {
    std::function<std::optional<std::string>(state::DurableStore&)> work =
        [this](state::DurableStore& store) -> std::optional<std::string> {
        const std::int64_t now_ms = UnixMillis(clock_.WallNow());
        try {
            return boost::json::serialize(state::ExportContents(store.Load(now_ms), now_ms));
        } catch (const state::StoreError&) {
            return std::nullopt;
        }
    };
    co_return co_await OnWriter(std::move(work));
}

asio::awaitable<bool> DurableState::KeyAdded(const config::ClientKey& key) {
    state::StoreBatch batch;
    batch.keys_added.push_back({key.name, boost::json::serialize(config::KeyRequestBody(key)),
                                UnixMillis(clock_.WallNow())});
    co_return co_await Write(std::move(batch));
}

asio::awaitable<bool> DurableState::KeyRemoved(std::string name) {
    state::StoreBatch batch;
    batch.keys_removed.push_back(std::move(name));
    co_return co_await Write(std::move(batch));
}

asio::awaitable<bool> DurableState::Flush() {
    state::StoreBatch nothing;  // the write takes everything queued with it
    co_return co_await Write(std::move(nothing));
}

void DurableState::AnswerKept(std::string key, std::string tenant, std::string fingerprint,
                              const answers::StoredAnswer* answer,
                              std::chrono::system_clock::time_point until) {
    state::StoreBatch batch;
    batch.idempotency.push_back(
        {std::move(key), std::move(tenant), std::move(fingerprint), answer != nullptr,
         answer != nullptr ? answers::Encode(*answer) : std::string(), UnixMillis(until)});
    writer_.Enqueue(std::move(batch));
}

}  // namespace switchyard::server
