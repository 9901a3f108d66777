#pragma once

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <utility>

#include "core/asio.h"

namespace switchyard::server {

// Runs `work` on `pool` and resumes the calling coroutine on its own executor with the result:
// CPU-bound work whose length a client controls (checking an answer against its schema) must not
// hold the worker's event loop, where every other request of the worker waits. `work` owns what it
// reads (it may outlive a caller that is torn down at shutdown).
template <class T>
asio::awaitable<T> RunOffLoop(asio::thread_pool& pool, std::function<T()> work) {
    auto initiate = [&pool](auto handler, std::function<T()> task) {
        auto home = asio::get_associated_executor(handler);
        asio::post(pool, [handler = std::move(handler), task = std::move(task), home]() mutable {
            T result = task();
            asio::post(home, [handler = std::move(handler), result = std::move(result)]() mutable {
                std::move(handler)(std::move(result));
            });
        });
    };
    co_return co_await asio::async_initiate<const asio::use_awaitable_t<>, void(T)>(
        initiate, asio::use_awaitable, std::move(work));
}

}  // namespace switchyard::server
