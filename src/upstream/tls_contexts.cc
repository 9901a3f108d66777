#include "upstream/tls_contexts.h"

#include <stdexcept>

namespace switchyard::upstream {
namespace {

std::unique_ptr<asio::ssl::context> MakeContext(const std::string& ca_file) {
    auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                         asio::ssl::context::no_tlsv1_1);
    context->set_verify_mode(asio::ssl::verify_peer);
    boost::system::error_code ec;
    context->set_default_verify_paths(ec);  // a missing system store is not fatal with ca_file
    if (!ca_file.empty()) {
        context->load_verify_file(ca_file, ec);
        if (ec) throw std::runtime_error("cannot load ca_file '" + ca_file + "': " + ec.message());
    }
    return context;
}

}  // namespace

TlsContexts::Contexts TlsContexts::Make(const config::Config& config) {
    Contexts contexts;
    contexts.emplace("", MakeContext(""));
    if (config.state.tls && !contexts.contains(config.state.ca_file)) {
        contexts.emplace(config.state.ca_file, MakeContext(config.state.ca_file));
    }
    for (const auto& group : config.models) {
        for (const auto& d : group.deployments) {
            if (d.base_url.tls && !contexts.contains(d.ca_file)) {
                contexts.emplace(d.ca_file, MakeContext(d.ca_file));
            }
        }
    }
    return contexts;
}

TlsContexts::TlsContexts(const config::Config& config) : contexts_(Make(config)) {}

void TlsContexts::Load(const config::Config& config) {
    Contexts fresh = Make(config);
    std::unique_lock lock(mutex_);
    for (auto& [file, context] : contexts_) retired_.push_back(std::move(context));
    contexts_ = std::move(fresh);
}

asio::ssl::context& TlsContexts::For(const std::string& ca_file) {
    std::shared_lock lock(mutex_);
    const auto it = contexts_.find(ca_file);
    return it != contexts_.end() ? *it->second : *contexts_.at("");
}

}  // namespace switchyard::upstream
