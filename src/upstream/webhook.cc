#include "upstream/webhook.h"

#include <fmt/format.h>

#include "core/version.h"

namespace switchyard::upstream {
namespace {

constexpr std::chrono::seconds kTimeout{10};

template <class Stream>
asio::awaitable<boost::system::error_code> Exchange(Stream& stream,
                                                    const http::request<http::string_body>& request,
                                                    unsigned& status) {
    auto [write_ec, written] = co_await http::async_write(stream, request, kTuple);
    if (write_ec) co_return write_ec;
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    auto [read_ec, read] = co_await http::async_read(stream, buffer, response, kTuple);
    status = response.result_int();
    co_return read_ec;
}

asio::awaitable<void> Post(asio::any_io_executor executor, TlsContexts* tls, core::BaseUrl url,
                           std::string json) {
    http::request<http::string_body> request{http::verb::post,
                                             url.path_prefix.empty() ? "/" : url.path_prefix, 11};
    request.set(http::field::host, url.HostHeader());
    request.set(http::field::content_type, "application/json");
    request.set(http::field::user_agent, std::string("switchyard/") + kVersion);
    request.keep_alive(false);
    request.body() = std::move(json);
    request.prepare_payload();

    tcp::resolver resolver(executor);
    auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
        url.host, std::to_string(url.port), tcp::resolver::numeric_service, kTuple);
    boost::system::error_code ec = resolve_ec;
    unsigned status = 0;
    if (!ec && url.tls) {
        beast::ssl_stream<beast::tcp_stream> stream(executor, tls->For(""));
        beast::get_lowest_layer(stream).expires_after(kTimeout);
        auto [connect_ec, endpoint] =
            co_await beast::get_lowest_layer(stream).async_connect(endpoints, kTuple);
        ec = connect_ec;
        if (!ec) {
            SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str());
            stream.set_verify_callback(asio::ssl::host_name_verification(url.host));
            auto [handshake_ec] =
                co_await stream.async_handshake(asio::ssl::stream_base::client, kTuple);
            ec = handshake_ec;
        }
        if (!ec) ec = co_await Exchange(stream, request, status);
    } else if (!ec) {
        beast::tcp_stream stream(executor);
        stream.expires_after(kTimeout);
        auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints, kTuple);
        ec = connect_ec;
        if (!ec) ec = co_await Exchange(stream, request, status);
    }
    if (ec || status < 200 || status >= 300) {
        fmt::print(
            stderr,
            "{{\"level\":\"error\",\"event\":\"webhook_failed\",\"host\":\"{}\",\"status\":{},"
            "\"error\":\"{}\"}}\n",
            url.host, status, ec ? ec.message() : "");
    }
}

}  // namespace

void PostWebhook(asio::any_io_executor executor, TlsContexts& tls, const std::string& url,
                 std::string json) {
    std::string error;
    std::optional<core::BaseUrl> parsed = core::ParseBaseUrl(url, error);
    if (!parsed) return;  // validated when the config was loaded
    asio::co_spawn(executor, Post(executor, &tls, std::move(*parsed), std::move(json)),
                   asio::detached);
}

}  // namespace switchyard::upstream
