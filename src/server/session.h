#pragma once

#include "server/server_context.h"

namespace switchyard::server {

// Serves one downstream connection: reads requests one after another (keep-alive), routes each to
// its handler and writes exactly one response per request, then closes. Runs on its worker's
// io_context; ends on client close, timeout, a protocol error or drain.
asio::awaitable<void> RunSession(tcp::socket socket, Worker* worker);

}  // namespace switchyard::server
