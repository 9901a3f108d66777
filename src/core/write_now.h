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
// lets the event loop poll on the way; written at once, neither happens. Deadlines work as for
// any write: an armed upstream::Watch cancels the asynchronous rest.
template <std::size_t N>
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> WriteNow(
    tcp::socket& socket, const std::array<asio::const_buffer, N>& buffers) {
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
    const std::size_t written = sent > 0 ? static_cast<std::size_t>(sent) : 0;
    if (written == total) co_return std::tuple{boost::system::error_code{}, written};
    beast::buffers_suffix<std::array<asio::const_buffer, N>> rest(buffers);
    rest.consume(written);
    auto [ec, more] = co_await asio::async_write(socket, rest, kTuple);
    co_return std::tuple{ec, written + more};
}

}  // namespace switchyard::core
