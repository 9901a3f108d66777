#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <tuple>

#include "core/asio.h"

namespace switchyard::core {

// Writes `buffers` to a TCP socket: at once, in one sendmsg, when the socket's send buffer takes
// them all — the usual case for an answer, a request or a stream's part of a few KiB — and the
// rest asynchronously. An asynchronous write that completes at once still posts its handler and
// lets the event loop poll on the way; written at once, neither happens. `progress` is called
// before each asynchronous part (never when everything went at once): a deadline it arms there
// bounds how long the peer may take no bytes — a stall — not how long a large write may take to a
// peer that reads slowly but steadily. An armed upstream::Watch cancels the pending part.
template <std::size_t N, class Progress>
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> WriteNow(
    tcp::socket& socket, const std::array<asio::const_buffer, N>& buffers, Progress progress) {
    std::array<iovec, N> parts{};
    std::size_t count = 0;
    std::size_t total = 0;
    for (const asio::const_buffer& b : buffers) {
        if (b.size() == 0) continue;
        parts[count++] = {const_cast<void*>(b.data()), b.size()};
        total += b.size();
    }
    msghdr message{};
    message.msg_iov = parts.data();
    message.msg_iovlen = count;
    const ssize_t sent = ::sendmsg(socket.native_handle(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        co_return std::tuple{boost::system::error_code(errno, boost::system::system_category()),
                             std::size_t{0}};
    }
    std::size_t written = sent > 0 ? static_cast<std::size_t>(sent) : 0;
    beast::buffers_suffix<std::array<asio::const_buffer, N>> rest(buffers);
    rest.consume(written);
    while (written < total) {
        progress();
        auto [ec, more] = co_await socket.async_write_some(rest, kTuple);
        written += more;
        rest.consume(more);
        if (ec) co_return std::tuple{ec, written};
    }
    co_return std::tuple{boost::system::error_code{}, written};
}

// WriteNow without a deadline of its own (the caller's, if any, bounds the whole write).
template <std::size_t N>
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> WriteNow(
    tcp::socket& socket, const std::array<asio::const_buffer, N>& buffers) {
    co_return co_await WriteNow(socket, buffers, [] {});
}

}  // namespace switchyard::core
