#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/arena_allocator.h"
#include "core/asio.h"
#include "core/error.h"
#include "providers/upstream_request.h"
#include "upstream/connection_pool.h"

namespace switchyard::upstream {

// An upstream response header. Its fields live in the exchange's arena (one allocation for all of
// them instead of one per field); a copy allocates normally, so it may outlive the exchange.
using ResponseAllocator = core::ArenaAllocator<char>;
using ResponseHeader = http::response_header<http::basic_fields<ResponseAllocator>>;

// One HTTP exchange with one deployment (an attempt's transport): send the request, read the
// response header, then the body whole or piece by piece. A keep-alive connection that turns out
// to be dead before any response byte arrived is replaced once with a fresh one (the peer closed
// it while idle; the request was not processed). Used from one coroutine at a time.
class UpstreamCall final {
  public:
    struct Timeouts {
        std::chrono::milliseconds connect;
        std::chrono::milliseconds first_byte;            // request written -> response header
        std::chrono::steady_clock::time_point deadline;  // the whole exchange
    };

    UpstreamCall(ConnectionPool& pool, const core::Clock& clock)
        : pool_(pool), clock_(clock), watch_(pool.WatchdogOf()) {}
    ~UpstreamCall();

    // Sends the request and reads the response header. False on failure, with `Error()` and
    // `Transport()` set. `request` (and the body it refers to) must outlive the call.
    asio::awaitable<bool> Start(const config::Deployment& deployment,
                                const providers::UpstreamRequest& request, Timeouts timeouts);

    const ResponseHeader& Header() const { return parser_->get().base(); }
    bool Done() const { return parser_->is_done(); }

    // Reads the rest of the body into `body` (limit `max_bytes`). False on failure.
    asio::awaitable<bool> ReadAll(std::string& body, std::size_t max_bytes);

    // The common case without waiting: a body of known length that arrived whole with its header
    // is taken from the connection's buffer into `body`. False when it did not (ReadAll then
    // reads it, or reports the failure this found).
    bool TakeBuffered(std::string& body, std::size_t max_bytes);

    // Reads the next body bytes into `buffer` (at most `size`); returns how many, 0 with Done()
    // at the end. On failure returns 0 with `Error()` set and Done() false.
    asio::awaitable<std::size_t> ReadSome(char* buffer, std::size_t size);

    // Bounds the next reads by `deadline` as well as the exchange's own (time to first token,
    // time between chunks). A read that runs out of time fails as a timeout.
    void SetReadDeadline(std::chrono::steady_clock::time_point deadline) {
        read_deadline_ = deadline;
    }

    // Cuts the exchange short (the client it was for went away): the operation in flight fails,
    // and the connection is closed instead of going back to the pool.
    void Abort();

    const core::LocalError& Error() const { return error_; }
    bool Failed() const { return failed_; }
    // How a failed call failed, for the classifier.
    policy::Transport Transport() const { return transport_; }

  private:
    template <class Stream>
    asio::awaitable<boost::system::error_code> Exchange(Stream& stream);
    template <class Stream>
    asio::awaitable<boost::system::error_code> ReadSomeOn(Stream& stream);
    void Fail(std::string_view step, const boost::system::error_code& ec);
    boost::system::error_code TimedOut(const boost::system::error_code& ec);

    ConnectionPool& pool_;
    const core::Clock& clock_;
    Watch watch_;  // the deadline of whatever operation is in flight
    const config::Deployment* deployment_ = nullptr;
    Timeouts timeouts_{};
    std::chrono::steady_clock::time_point read_deadline_ =
        std::chrono::steady_clock::time_point::max();
    std::string request_head_;       // serialised request line and headers
    std::string_view request_body_;  // the UpstreamRequest's body
    std::unique_ptr<Connection> connection_;
    // Declared before the parser that allocates from it.
    std::array<std::byte, 2048> arena_buffer_;
    std::pmr::monotonic_buffer_resource arena_{arena_buffer_.data(), arena_buffer_.size()};
    std::optional<http::response_parser<http::buffer_body, ResponseAllocator>> parser_;
    core::LocalError error_;
    bool failed_ = false;
    bool aborted_ = false;
    policy::Transport transport_ = policy::Transport::kOk;
};

}  // namespace switchyard::upstream
