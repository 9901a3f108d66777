#include "upstream/upstream_call.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <type_traits>

#include "core/write_now.h"

namespace switchyard::upstream {
namespace {

constexpr std::uint64_t kMaxResponseBytes = 1ull << 32;
constexpr std::uint32_t kMaxHeaderBytes = 64 * 1024;
// Interim responses accepted before the final one.
constexpr int kMaxInterimResponses = 8;

bool IsStaleConnectionError(const boost::system::error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == asio::ssl::error::stream_truncated;
}

}  // namespace

UpstreamCall::~UpstreamCall() {
    // Only a connection whose exchange completed cleanly goes back to the pool.
    if (connection_ && !failed_ && !aborted_ && parser_ && parser_->is_done() &&
        parser_->keep_alive() && connection_->buffer.size() == 0 &&
        !(connection_->tls && SSL_pending(connection_->tls->native_handle()) > 0)) {
        pool_.Release(std::move(connection_));
    }
}

void UpstreamCall::Abort() {
    aborted_ = true;
    if (!connection_) return;  // still connecting: the connect timeout bounds it
    boost::system::error_code ignored;
    connection_->Lowest().socket().close(ignored);
}

boost::system::error_code UpstreamCall::TimedOut(const boost::system::error_code& ec) {
    // An operation the watchdog cancelled ran out of time.
    const bool fired = watch_.Fired();
    watch_.Reset();
    if (ec && fired) return make_error_code(beast::error::timeout);
    return ec;
}

void UpstreamCall::Fail(std::string_view step, const boost::system::error_code& ec) {
    failed_ = true;
    const std::string& name = deployment_->name;
    if (ec == beast::error::timeout) {
        transport_ = policy::Transport::kTimeout;
        error_ = {core::ErrorKind::kUpstreamTimeout,
                  "Upstream '" + name + "' timed out during " + std::string(step) + "."};
        return;
    }
    transport_ = policy::Transport::kReset;
    if (ec.category() == make_error_code(http::error::bad_version).category() ||
        ec == http::error::body_limit) {
        transport_ = policy::Transport::kProtocol;
        error_ = {core::ErrorKind::kUpstreamProtocol,
                  "Upstream '" + name + "' broke HTTP/1.1 during " + std::string(step) + " (" +
                      ec.message() + ")."};
    } else {
        error_ = {core::ErrorKind::kUpstreamUnreachable, "Upstream '" + name + "' failed during " +
                                                             std::string(step) + " (" +
                                                             ec.message() + ")."};
    }
}

template <class Stream>
asio::awaitable<boost::system::error_code> UpstreamCall::Exchange(Stream& stream) {
    beast::tcp_stream& lowest = connection_->Lowest();
    watch_.Arm(lowest.socket(), std::min(clock_.Now() + timeouts_.first_byte, timeouts_.deadline));
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(request_head_),
                                                    asio::buffer(request_body_)};
    boost::system::error_code write_ec;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
        std::tie(write_ec, std::ignore) = co_await core::WriteNow(stream.socket(), buffers);
    } else {
        std::tie(write_ec, std::ignore) = co_await asio::async_write(stream, buffers, kTuple);
    }
    if (write_ec) co_return TimedOut(write_ec);
    // Interim (1xx) responses may come before the final one (RFC 9110 section 15.2): each is read
    // whole and dropped, never relayed — a proxy need not forward them — and never taken for the
    // answer, which would leave the real answer on the connection for whoever sends next.
    for (int interim = 0;; ++interim) {
        parser_.emplace(std::piecewise_construct, std::make_tuple(),
                        std::make_tuple(ResponseAllocator(&arena_)));
        parser_->body_limit(kMaxResponseBytes);
        parser_->header_limit(kMaxHeaderBytes);
        auto [read_ec, read] =
            co_await http::async_read_header(stream, connection_->buffer, *parser_, kTuple);
        if (read_ec) co_return TimedOut(read_ec);
        const unsigned status = parser_->get().result_int();
        if (status >= 200) co_return TimedOut(read_ec);
        // 101 answers an upgrade this client never asks for; endless 1xx would never end.
        if (status == 101 || interim + 1 == kMaxInterimResponses) {
            watch_.Reset();
            co_return make_error_code(http::error::bad_status);
        }
    }
}

asio::awaitable<bool> UpstreamCall::Start(const config::Deployment& deployment,
                                          const providers::UpstreamRequest& request,
                                          Timeouts timeouts) {
    deployment_ = &deployment;
    timeouts_ = timeouts;
    // One pass, one write with the body; HTTP/1.1 keeps the connection alive by default.
    request_body_ = request.Body();
    request_head_.clear();
    request_head_.reserve(256 + request.target.size());
    request_head_.append(request.method)
        .append(" ")
        .append(request.target)
        .append(" HTTP/1.1\r\nHost: ");
    request_head_.append(deployment.base_url.HostHeader()).append("\r\n");
    for (const auto& [name, value] : request.headers) {
        request_head_.append(name).append(": ").append(value).append("\r\n");
    }
    if (!request.authorization.empty()) {
        request_head_.append("authorization: ").append(request.authorization).append("\r\n");
    }
    request_head_.append("Content-Length: ")
        .append(std::to_string(request_body_.size()))
        .append("\r\n\r\n");

    for (int round = 0; round < 2; ++round) {
        connection_ = round == 0 ? pool_.TakeIdle(deployment) : nullptr;
        if (!connection_) {
            const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
                timeouts_.deadline - clock_.Now());
            const auto budget =
                std::max(std::chrono::milliseconds(1), std::min(timeouts_.connect, remaining));
            connection_ = co_await pool_.Connect(deployment, budget, watch_, error_, transport_);
            if (!connection_) {
                failed_ = true;
                co_return false;
            }
        }
        if (aborted_) {
            // Aborted while connecting: the request is not sent for nobody.
            Fail("connect", asio::error::operation_aborted);
            co_return false;
        }
        const bool reused = connection_->reused;
        boost::system::error_code ec;
        if (connection_->tls) {
            ec = co_await Exchange(*connection_->tls);
        } else {
            ec = co_await Exchange(*connection_->tcp);
        }
        if (!ec) co_return true;
        const bool nothing_received =
            connection_->buffer.size() == 0 && (!parser_ || !parser_->got_some());
        connection_.reset();
        if (reused && nothing_received && IsStaleConnectionError(ec)) continue;
        Fail("the response header", ec);
        co_return false;
    }
    failed_ = true;
    transport_ = policy::Transport::kReset;
    error_ = {core::ErrorKind::kUpstreamUnreachable,
              "Upstream '" + deployment.name + "' closed the connection."};
    co_return false;
}

template <class Stream>
asio::awaitable<boost::system::error_code> UpstreamCall::ReadSomeOn(Stream& stream) {
    watch_.Arm(connection_->Lowest().socket(), std::min(timeouts_.deadline, read_deadline_));
    auto [ec, n] = co_await http::async_read_some(stream, connection_->buffer, *parser_, kTuple);
    co_return TimedOut(ec);
}

asio::awaitable<std::size_t> UpstreamCall::ReadSome(char* buffer, std::size_t size) {
    if (failed_ || parser_->is_done()) co_return 0;
    parser_->get().body().data = buffer;
    parser_->get().body().size = size;
    parser_->get().body().more = true;
    boost::system::error_code ec;
    if (connection_->tls) {
        ec = co_await ReadSomeOn(*connection_->tls);
    } else {
        ec = co_await ReadSomeOn(*connection_->tcp);
    }
    if (ec == http::error::need_buffer) ec = {};
    // Then every chunk that arrived with it, without reading again: a provider that sends many
    // events in one packet costs one read here, and one write downstream (server/relay.cc).
    beast::flat_buffer& buffered = connection_->buffer;
    while (!ec && !parser_->is_done() && parser_->get().body().size > 0 && buffered.size() > 0) {
        const std::size_t used = parser_->put(buffered.data(), ec);
        buffered.consume(used);
        if (ec == http::error::need_more || ec == http::error::need_buffer) {
            ec = {};  // a chunk not yet whole, or no room left: the next read goes on
            break;
        }
        if (used == 0) break;
    }
    if (ec) {
        Fail("the response body", ec);
        co_return 0;
    }
    co_return size - parser_->get().body().size;
}

bool UpstreamCall::TakeBuffered(std::string& body, std::size_t max_bytes) {
    if (failed_ || !parser_ || !connection_) return false;
    if (parser_->is_done()) {
        body.clear();
        return true;
    }
    beast::flat_buffer& buffer = connection_->buffer;
    const auto length = parser_->content_length();
    if (!length || *length > max_bytes || *length > buffer.size()) return false;
    body.resize(static_cast<std::size_t>(*length));
    auto& target = parser_->get().body();
    target.data = body.data();
    target.size = body.size();
    target.more = true;
    boost::system::error_code ec;
    buffer.consume(parser_->put(buffer.data(), ec));
    if (ec || !parser_->is_done()) {
        Fail("the response body", ec ? ec : make_error_code(http::error::partial_message));
        return false;
    }
    return true;
}

asio::awaitable<bool> UpstreamCall::ReadAll(std::string& body, std::size_t max_bytes) {
    // Reads straight into `body` (no buffer in the coroutine frame: a large frame would be a
    // large allocation on every request).
    std::size_t capacity = 16 * 1024;
    if (const auto length = parser_->content_length()) {
        capacity = static_cast<std::size_t>(std::min<std::uint64_t>(*length, max_bytes)) + 1;
    }
    body.clear();
    while (!parser_->is_done()) {
        if (body.size() == max_bytes) {
            Fail("the response body", http::error::body_limit);
            co_return false;
        }
        const std::size_t used = body.size();
        body.resize(std::min(max_bytes, std::max(used + capacity, used * 2)));
        const std::size_t n = co_await ReadSome(body.data() + used, body.size() - used);
        body.resize(used + n);
        if (failed_) co_return false;
    }
    co_return true;
}

}  // namespace switchyard::upstream
