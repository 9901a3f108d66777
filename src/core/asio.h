#pragma once

// The Asio/Beast headers and namespace aliases used by the I/O modules (server, upstream). Kept in
// one header so it can serve as their precompiled header; policy, config and routing code never
// includes it.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace switchyard {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// Completion token for operations whose errors are expected: returns (error_code, results...).
inline constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

}  // namespace switchyard
