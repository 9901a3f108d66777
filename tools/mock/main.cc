// switchyard-mock: a fault-injecting OpenAI-compatible provider for tests and benchmarks.

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "rate_limits.h"
#include "scenario.h"
#include "server.h"

namespace switchyard::mock {
namespace {

constexpr int kUsageError = 2;

constexpr std::string_view kUsage = R"(Usage: switchyard-mock --listen HOST:PORT [options]

A fault-injecting provider: OpenAI-compatible (POST /v1/chat/completions, /v1/embeddings,
/v1/responses, and the Batch API: /v1/files, /v1/batches) and Anthropic Messages API
(POST /v1/messages, and message batches: /v1/messages/batches).

Options:
  --listen HOST:PORT     Address to listen on; port 0 picks a free port.
  --threads N            Threads, each with its own event loop (default 1).
  --scenario FILE        Fault rules loaded at start (JSON, see docs/mock.md).
  --tls-cert PEM         Serve HTTPS only, with this certificate chain...
  --tls-key PEM          ...and this private key.
  --require-key KEY      Answer 401 unless "Authorization: Bearer KEY" (or, on
                         /v1/messages, "x-api-key: KEY").
  --seed N               Seed for probability= faults (default: random).
  --limits SPEC          Enforce rate limits, e.g. "rpm=60,tpm=40000,itpm=0,otpm=0,
                         acceleration=4,acceleration_min_rpm=30" (0 = unlimited;
                         default: all unlimited).
  --batch-ms N           Milliseconds a batch takes from creation to its end (default
                         300; a batch_ms fault overrides it per batch).
  --help                 Show this help.

Once listening, prints "switchyard-mock listening on HOST:PORT" on stdout.
Faults: header "x-mock-fault: key=value;..." or scenario rules. Control endpoints:
GET /mock/stats, POST /mock/reset, POST|DELETE /mock/scenario, GET|POST|DELETE /mock/limits.
)";

struct CommandLine final {
    ServerOptions server;
    std::string scenario_path;
    bool help = false;
};

template <typename T>
std::optional<T> ParseNumber(std::string_view text) {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Splits "HOST:PORT", "[V6]:PORT" into options. Returns an error message or "".
std::string ParseListen(std::string_view listen, ServerOptions& options) {
    const auto colon = listen.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return "--listen expects HOST:PORT";
    std::string_view host = listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    const auto port = ParseNumber<std::uint16_t>(listen.substr(colon + 1));
    if (!port) return fmt::format("--listen: bad port in '{}'", listen);
    options.host = host;
    options.port = *port;
    return {};
}

// Parses argv. Returns an error message or "".
std::string ParseCommandLine(int argc, char** argv, CommandLine& command_line) {
    bool has_listen = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        std::optional<std::string_view> inline_value;
        if (const auto equals = arg.find('='); arg.starts_with("--") && equals != arg.npos) {
            inline_value = arg.substr(equals + 1);
            arg = arg.substr(0, equals);
        }
        if (arg == "--help" || arg == "-h") {
            command_line.help = true;
            return {};
        }
        std::string_view value;
        if (inline_value) {
            value = *inline_value;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return fmt::format("{} needs a value", arg);
        }
        auto& server = command_line.server;
        if (arg == "--listen") {
            if (auto error = ParseListen(value, server); !error.empty()) return error;
            has_listen = true;
        } else if (arg == "--threads") {
            const auto threads = ParseNumber<int>(value);
            if (!threads || *threads < 1 || *threads > 256) {
                return "--threads expects an integer in [1, 256]";
            }
            server.threads = *threads;
        } else if (arg == "--scenario") {
            command_line.scenario_path = value;
        } else if (arg == "--tls-cert") {
            server.tls_cert = value;
        } else if (arg == "--tls-key") {
            server.tls_key = value;
        } else if (arg == "--require-key") {
            server.require_key = std::string(value);
        } else if (arg == "--limits") {
            ParsedRateLimits limits = ParseRateLimitSpec(value);
            if (!limits.ok()) return fmt::format("--limits: {}", limits.error);
            server.limits = limits.config;
        } else if (arg == "--batch-ms") {
            const auto ms = ParseNumber<int>(value);
            if (!ms || *ms < 0 || *ms > 86'400'000) {
                return "--batch-ms expects milliseconds in [0, 86400000]";
            }
            server.batch_ms = std::chrono::milliseconds(*ms);
        } else if (arg == "--seed") {
            server.seed = ParseNumber<std::uint64_t>(value);
            if (!server.seed) return "--seed expects a non-negative integer";
        } else {
            return fmt::format("unknown option {}", arg);
        }
    }
    if (!has_listen) return "--listen HOST:PORT is required";
    if (command_line.server.tls_cert.empty() != command_line.server.tls_key.empty()) {
        return "--tls-cert and --tls-key go together";
    }
    return {};
}

int Main(int argc, char** argv) {
    CommandLine command_line;
    if (auto error = ParseCommandLine(argc, argv, command_line); !error.empty()) {
        std::cerr << "switchyard-mock: " << error << " (see --help)\n";
        return kUsageError;
    }
    if (command_line.help) {
        std::cout << kUsage;
        return 0;
    }

    std::shared_ptr<const Scenario> scenario;
    if (!command_line.scenario_path.empty()) {
        std::ifstream file(command_line.scenario_path, std::ios::binary);
        if (!file) {
            std::cerr << "switchyard-mock: cannot read " << command_line.scenario_path << "\n";
            return kUsageError;
        }
        std::ostringstream text;
        text << file.rdbuf();
        ParsedScenario parsed = ParseScenario(text.str());
        if (!parsed.ok()) {
            std::cerr << "switchyard-mock: " << command_line.scenario_path << ": " << parsed.error
                      << "\n";
            return kUsageError;
        }
        scenario = std::move(parsed.scenario);
    }

    // Writes to a peer that has gone must fail with EPIPE rather than kill the process.
    std::signal(SIGPIPE, SIG_IGN);
    try {
        Server server(std::move(command_line.server), std::move(scenario));
        const std::string address = server.Bind();
        std::cout << "switchyard-mock listening on " << address << std::endl;
        server.Run();
    } catch (const std::exception& error) {
        std::cerr << "switchyard-mock: " << error.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace
}  // namespace switchyard::mock

int main(int argc, char** argv) { return switchyard::mock::Main(argc, argv); }
