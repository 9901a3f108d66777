#pragma once

#include <chrono>
#include <functional>

#include "core/asio.h"
#include "core/clock.h"

namespace switchyard::upstream {

class Watchdog;

// A deadline on one socket's pending operations: once armed and past its deadline, the watchdog
// cancels the socket's operations (they complete with operation_aborted) and `Fired()` turns true,
// which the owner reads as a timeout. Arming and disarming are plain stores — no timer syscalls
// per operation, which is what a per-operation timer costs on every request. Lives on its worker's
// thread; unlinks itself on destruction.
class Watch final {
  public:
    explicit Watch(Watchdog& watchdog);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

    void Arm(tcp::socket& socket, std::chrono::steady_clock::time_point deadline);
    void Disarm() { socket_ = nullptr; }
    bool Fired() const { return fired_; }
    void Reset() {
        socket_ = nullptr;
        fired_ = false;
    }

  private:
    friend class Watchdog;
    Watchdog& watchdog_;
    Watch* prev_ = nullptr;
    Watch* next_ = nullptr;
    tcp::socket* socket_ = nullptr;
    std::chrono::steady_clock::time_point deadline_{};
    bool fired_ = false;
};

// Work that begins only at the watchdog's next sweep (within one tick), unless cancelled before:
// what most requests finish before (watching their client while an upstream answers) is then
// never started. Lives on its worker's thread; unlinks itself on Cancel() and destruction.
class Deferred final {
  public:
    explicit Deferred(Watchdog& watchdog) : watchdog_(watchdog) {}
    ~Deferred() { Cancel(); }
    Deferred(const Deferred&) = delete;
    Deferred& operator=(const Deferred&) = delete;

    // Calls `begin` once, from the next sweep (a new schedule replaces a pending one). `begin`
    // must only start work (co_spawn, post), never run it: the sweep calls it mid-walk.
    void Schedule(std::function<void()> begin);
    void Cancel();
    bool Pending() const { return linked_; }

  private:
    friend class Watchdog;
    void Link();
    void Unlink();

    Watchdog& watchdog_;
    Deferred* prev_ = nullptr;
    Deferred* next_ = nullptr;
    bool linked_ = false;
    std::function<void()> begin_;
};

// One per worker: a single periodic timer that checks every armed Watch and Deferred. Timeouts
// therefore fire up to one tick late (20 ms by default) — ample precision for connect, first-token,
// chunk and idle budgets measured in hundreds of milliseconds or more. Not thread-safe:
// worker-local.
class Watchdog final {
  public:
    Watchdog(asio::any_io_executor executor, const core::Clock& clock,
             std::chrono::milliseconds tick = std::chrono::milliseconds(20));

    // Starts ticking on the executor; the loop ends when the io_context stops.
    void Start();
    // From now on every armed watch fires at the next sweep, whatever its deadline: the calls of
    // a runner that stops end within a tick (as timeouts). On the watchdog's thread.
    void ExpireAll() { expire_all_ = true; }
    const core::Clock& Clock() const { return clock_; }

  private:
    friend class Watch;
    friend class Deferred;
    asio::awaitable<void> Tick();
    void Sweep();

    asio::any_io_executor executor_;
    const core::Clock& clock_;
    std::chrono::milliseconds tick_;
    Watch* head_ = nullptr;
    Deferred* deferred_ = nullptr;
    bool expire_all_ = false;
};

}  // namespace switchyard::upstream
