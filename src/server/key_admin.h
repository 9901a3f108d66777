#pragma once

#include <boost/json/object.hpp>
#include <string_view>

#include "server/request_context.h"

namespace switchyard::server {

// Client keys at run time (master key): GET /admin/keys lists them with their usage (never the
// key or its hash), POST /admin/keys adds one (the generated key is returned once, in that
// answer), DELETE /admin/keys/{name} removes one. With the durable store (the default) a change
// is on disk before it is answered, and keys added here outlive the process; with state.backend
// memory they live until it ends.
// A key as the admin API and /status show it: its limits and usage, never the key or its hash.
boost::json::object DescribeKey(const limits::ClientKeyState& key, const core::Clock& clock);

// The answer to an admin change the durable store could not write (503); `outcome` says what
// became of the change.
core::LocalError StoreRefusal(const RequestContext& ctx, std::string_view outcome);

asio::awaitable<void> ServeListKeys(RequestContext& ctx);
asio::awaitable<void> ServeAddKey(RequestContext& ctx);
asio::awaitable<void> ServeDeleteKey(RequestContext& ctx, std::string_view name);

}  // namespace switchyard::server
