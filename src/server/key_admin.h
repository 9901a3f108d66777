#pragma once

#include <boost/json/object.hpp>
#include <string_view>

#include "server/request_context.h"

namespace switchyard::server {

// Client keys at run time (master key): GET /admin/keys lists them with their usage (never the
// key or its hash), POST /admin/keys adds one (the generated key is returned once, in that
// answer), DELETE /admin/keys/{name} removes one. Keys added here live until the process ends.
// A key as the admin API and /status show it: its limits and usage, never the key or its hash.
boost::json::object DescribeKey(const limits::ClientKeyState& key, const core::Clock& clock);

asio::awaitable<void> ServeListKeys(RequestContext& ctx);
asio::awaitable<void> ServeAddKey(RequestContext& ctx);
asio::awaitable<void> ServeDeleteKey(RequestContext& ctx, std::string_view name);

}  // namespace switchyard::server
