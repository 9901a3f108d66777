#pragma once

#include <array>
#include <memory>

#include "server/request_context.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {

// Notices a client that goes away while its request is being worked on — waiting for an upstream,
// backing off, waiting for headroom — and stops that work: the attempt in flight is aborted and a
// wait is cut short, so no upstream work is done for nobody. It waits for the downstream socket to
// become readable and peeks: end of stream or a reset means the client is gone; bytes (a
// pipelined request) mean it is still there, and the watch ends. The wait begins at the worker
// watchdog's next sweep (within one tick, 20 ms): a request answered before costs no wait, no
// epoll registration and no cancellation, and a client gone sooner is noticed then. One per
// request, on the request's own executor (no locks); Stop() before the session uses the socket
// again.
//
// A request that runs to its end for nobody (RequestContext::detached: a retry of it will want
// its answer) is an orphan once its client has gone: its downstream connection is closed at once
// (it holds a file descriptor for nobody) and it works on, counted in the context's orphans. Past
// kMaxOrphans it is stopped like any other request (its idempotency key may then run again), so
// requests whose clients left never hold resources without bound.
class ClientWatch final : public std::enable_shared_from_this<ClientWatch> {
  public:
    static constexpr int kMaxOrphans = 256;

    static std::shared_ptr<ClientWatch> Start(RequestContext& ctx);
    ~ClientWatch();

    bool Gone() const { return gone_; }
    // What to stop if the client goes: the attempts in flight (two while one is hedged), the wait
    // in progress. Untrack forgets one.
    void Track(upstream::UpstreamCall* call) {
        for (upstream::UpstreamCall*& slot : calls_) {
            if (slot == nullptr) {
                slot = call;
                return;
            }
        }
    }
    void Untrack(upstream::UpstreamCall* call) {
        for (upstream::UpstreamCall*& slot : calls_) {
            if (slot == call) slot = nullptr;
        }
    }
    void Track(asio::steady_timer* timer) { timer_ = timer; }
    void Untrack(asio::steady_timer*) { timer_ = nullptr; }
    // Ends the watch; it never touches the socket afterwards.
    void Stop();

  private:
    ClientWatch(tcp::socket& socket, upstream::Watchdog& watchdog, std::atomic<int>* orphans)
        : socket_(socket), start_(watchdog), orphans_(orphans) {}
    static asio::awaitable<void> Run(std::shared_ptr<ClientWatch> self);
    void ClientLeft();

    tcp::socket& socket_;
    upstream::Deferred start_;   // pending until the wait begins
    std::atomic<int>* orphans_;  // a detached request's count of orphans; null otherwise
    bool orphaned_ = false;      // counted in *orphans_
    bool gone_ = false;
    bool stopped_ = false;
    std::array<upstream::UpstreamCall*, 2> calls_{};
    asio::steady_timer* timer_ = nullptr;
};

// Tracks `work` (an UpstreamCall or a timer) on `watch` (if any) for as long as it lives.
template <class Work>
class TrackedBy final {
  public:
    TrackedBy(ClientWatch* watch, Work& work) : watch_(watch), work_(work) {
        if (watch_ != nullptr) watch_->Track(&work);
    }
    TrackedBy(const TrackedBy&) = delete;
    TrackedBy& operator=(const TrackedBy&) = delete;
    ~TrackedBy() {
        if (watch_ != nullptr) watch_->Untrack(&work_);
    }

  private:
    ClientWatch* watch_;
    Work& work_;
};

// Stops a ClientWatch when the request's handling ends, however it ends.
class ClientWatchScope final {
  public:
    explicit ClientWatchScope(std::shared_ptr<ClientWatch> watch) : watch_(std::move(watch)) {}
    ClientWatchScope(const ClientWatchScope&) = delete;
    ClientWatchScope& operator=(const ClientWatchScope&) = delete;
    ~ClientWatchScope() { watch_->Stop(); }
    ClientWatch& operator*() const { return *watch_; }
    ClientWatch* operator->() const { return watch_.get(); }

  private:
    std::shared_ptr<ClientWatch> watch_;
};

}  // namespace switchyard::server
