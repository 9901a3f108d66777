#include "upstream/watchdog.h"

namespace switchyard::upstream {

Watch::Watch(Watchdog& watchdog) : watchdog_(watchdog) {
    next_ = watchdog_.head_;
    if (next_ != nullptr) next_->prev_ = this;
    watchdog_.head_ = this;
}

Watch::~Watch() {
    if (prev_ != nullptr) {
        prev_->next_ = next_;
    } else {
        watchdog_.head_ = next_;
    }
    if (next_ != nullptr) next_->prev_ = prev_;
}

void Watch::Arm(tcp::socket& socket, std::chrono::steady_clock::time_point deadline) {
    socket_ = &socket;
    deadline_ = deadline;
    fired_ = false;
}

void Deferred::Schedule(std::function<void()> begin) {
    begin_ = std::move(begin);
    if (!linked_) Link();
}

void Deferred::Cancel() {
    if (linked_) Unlink();
}

void Deferred::Link() {
    next_ = watchdog_.deferred_;
    prev_ = nullptr;
    if (next_ != nullptr) next_->prev_ = this;
    watchdog_.deferred_ = this;
    linked_ = true;
}

void Deferred::Unlink() {
    if (prev_ != nullptr) {
        prev_->next_ = next_;
    } else {
        watchdog_.deferred_ = next_;
    }
    if (next_ != nullptr) next_->prev_ = prev_;
    prev_ = next_ = nullptr;
    linked_ = false;
}

Watchdog::Watchdog(asio::any_io_executor executor, const core::Clock& clock,
                   std::chrono::milliseconds tick)
    : executor_(executor), clock_(clock), tick_(tick) {}

void Watchdog::Start() { asio::co_spawn(executor_, Tick(), asio::detached); }

asio::awaitable<void> Watchdog::Tick() {
    asio::steady_timer timer(executor_);
    for (;;) {
        timer.expires_after(tick_);
        auto [ec] = co_await timer.async_wait(kTuple);
        if (ec) co_return;
        Sweep();
    }
}

void Watchdog::Sweep() {
    const auto now = clock_.Now();
    for (Watch* w = head_; w != nullptr; w = w->next_) {
        if (w->socket_ == nullptr || (now < w->deadline_ && !expire_all_)) continue;
        w->fired_ = true;
        boost::system::error_code ignored;
        w->socket_->cancel(ignored);
        w->socket_ = nullptr;
    }
    for (Deferred* d = deferred_; d != nullptr;) {
        Deferred* next = d->next_;
        d->Unlink();
        // `begin` only spawns work (Schedule's contract), so `next` outlives the call.
        const std::function<void()> begin = std::move(d->begin_);
        begin();
        d = next;
    }
}

}  // namespace switchyard::upstream
