#include "server/client_watch.h"

#include <sys/socket.h>

#include <cerrno>

namespace switchyard::server {

std::shared_ptr<ClientWatch> ClientWatch::Start(RequestContext& ctx) {
    std::shared_ptr<ClientWatch> self(new ClientWatch(
        ctx.stream.socket(), ctx.worker.watchdog, ctx.detached ? &ctx.Context().orphans : nullptr));
    ClientWatch* watcher = self.get();
    // Captures one pointer: kept inside the std::function, no allocation.
    self->start_.Schedule([watcher] {
        asio::co_spawn(watcher->socket_.get_executor(), Run(watcher->shared_from_this()),
                       asio::detached);
    });
    return self;
}

asio::awaitable<void> ClientWatch::Run(std::shared_ptr<ClientWatch> self) {
    if (self->stopped_) co_return;  // stopped between the sweep and this start
    auto [ec] = co_await self->socket_.async_wait(tcp::socket::wait_read, kTuple);
    if (self->stopped_) co_return;
    if (ec) {
        if (ec != asio::error::operation_aborted) self->ClientLeft();
        co_return;
    }
    char byte = 0;
    const ssize_t n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    // 0: the client closed its side; an error other than "nothing yet": the connection broke.
    // Bytes are a pipelined request: the client is still there.
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        self->ClientLeft();
    }
}

ClientWatch::~ClientWatch() {
    if (orphaned_) orphans_->fetch_sub(1, std::memory_order_relaxed);
}

void ClientWatch::ClientLeft() {
    if (orphans_ != nullptr && orphans_->fetch_add(1, std::memory_order_relaxed) < kMaxOrphans) {
        // Works on for its stored answer; the connection to nobody goes now (its writes fail and
        // are skipped).
        orphaned_ = true;
        boost::system::error_code ignored;
        socket_.close(ignored);
        return;
    }
    if (orphans_ != nullptr) orphans_->fetch_sub(1, std::memory_order_relaxed);
    gone_ = true;
    for (upstream::UpstreamCall* call : calls_) {
        if (call != nullptr) call->Abort();
    }
    if (timer_ != nullptr) timer_->cancel();
}

void ClientWatch::Stop() {
    if (stopped_) return;
    stopped_ = true;
    if (start_.Pending()) {
        start_.Cancel();  // the wait never began: nothing to cancel on the socket
        return;
    }
    if (!gone_) {
        // The handler is done with the socket's operations; only the watch's wait is pending.
        boost::system::error_code ignored;
        socket_.cancel(ignored);
    }
}

}  // namespace switchyard::server
