#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "answers/idempotency_store.h"
#include "config/config.h"
#include "core/asio.h"
#include "core/clock.h"
#include "limits/client_keys.h"
#include "observe/metrics.h"
#include "routing/deployment_health.h"
#include "server/runtime.h"
#include "state/store_writer.h"

namespace switchyard::server {

// What the gateway keeps in its durable store (state.backend: sqlite;
// docs/state.md#the-durable-store) and how it comes back at start: client keys added at run time,
// each key's spend and tokens per month, deployments' disables, cooldowns, open breakers and rate
// limits with their expiry, and idempotency keys' answers. Requests never wait for it: spend is
// read from the keys once a second and kept answers and cooldowns go with that write; admin changes
// are written before they are acknowledged, and a spend-cap disable is written at once.
// Thread-safe.
class DurableState final {
  public:
    // Opens the store at `config.path`. Throws state::StoreError with the reason the gateway
    // cannot start.
    DurableState(const config::StateConfig& config, std::size_t max_answer_bytes,
                 observe::Metrics& metrics, const core::Clock& clock);

    const std::string& Path() const { return writer_.Path(); }

    // What was read back at start.
    struct Restored {
        std::size_t keys = 0, spend = 0, marks = 0, answers = 0;
    };
    // Reads the store into the gateway's state (before the first request): keys added at run
    // time, this month's spend of every key, the marks of the config's deployments (by name) and
    // the kept answers.
    Restored Restore(const config::Config& config, limits::ClientKeys& keys, const Runtime& runtime,
                     answers::IdempotencyStore* idempotency);
    // Starts the writer, which reads the keys' spend from `keys` before each write.
    void Start(limits::ClientKeys& keys);
    // Writes what is left (at shutdown, after the last request).
    void Stop() { writer_.Stop(); }

    // A change of a deployment's health (the runtime's listener).
    void HealthChanged(std::string_view deployment, const routing::HealthChange& change);
    // The admin API added or removed a key: true once it is on disk.
    asio::awaitable<bool> KeyAdded(const config::ClientKey& key);
    asio::awaitable<bool> KeyRemoved(std::string name);
    // Everything changed so far is written: true once it is on disk.
    asio::awaitable<bool> Flush();
    // The store's contents as `switchyard state export` writes them (nullopt: it cannot be
    // read).
    asio::awaitable<std::optional<std::string>> Export();
    // An idempotency key's outcome, kept until `until` (null answer: it ran, but its answer
    // was too large to keep).
    void AnswerKept(std::string key, std::string tenant, std::string fingerprint,
                    const answers::StoredAnswer* answer,
                    std::chrono::system_clock::time_point until);

    // Runs `work` on the writer thread, the store's one user, and resumes the caller on its own
    // executor with the result (the Batch APIs' tables: batches/batch_records.h).
    template <class T>
    asio::awaitable<T> OnWriter(std::function<T(state::DurableStore&)> work);

  private:
    asio::awaitable<bool> Write(state::StoreBatch batch);

    const core::Clock& clock_;
    state::StoreWriter writer_;
};

template <class T>
asio::awaitable<T> DurableState::OnWriter(std::function<T(state::DurableStore&)> work) {
    auto initiate = [this](auto handler, std::function<T(state::DurableStore&)> task) {
        auto home = asio::get_associated_executor(handler);
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        writer_.Visit([shared, home, task = std::move(task)](state::DurableStore& store) {
            T result = task(store);
            asio::post(home, [shared, result = std::move(result)]() mutable {
                std::move (*shared)(std::move(result));
            });
        });
    };
    co_return co_await asio::async_initiate<const asio::use_awaitable_t<>, void(T)>(
        initiate, asio::use_awaitable, std::move(work));
}

// "YYYY-MM" for a month as ClientKeyState counts it (year * 12 + month - 1), and back (-1: not
// a month).
std::string MonthName(int month);
int MonthIndex(std::string_view name);

}  // namespace switchyard::server
