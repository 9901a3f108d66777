#include "drills/drill_command.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <optional>

#include "core/clock.h"
#include "drills/drill_report.h"
#include "drills/drill_run.h"
#include "observe/metrics.h"
#include "upstream/connection_pool.h"
#include "upstream/tls_contexts.h"
#include "upstream/watchdog.h"

namespace switchyard::drills {
namespace {

constexpr std::string_view kUsage =
    "usage: switchyard drill --config FILE --group NAME --cases FILE.jsonl [--report FILE.json]\n"
    "                        [--html FILE.html] [--concurrency N] [--max-cost USD]\n";
constexpr std::size_t kMaxCasesBytes = 64 << 20;

std::optional<std::string> ReadWhole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(kMaxCasesBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

bool WriteWhole(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    return static_cast<bool>(out);
}

template <class Number>
bool ReadNumber(std::string_view text, Number& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<config::Problem> CaseProblems(const config::Config& config, std::string_view file) {
    std::vector<config::Problem> out;
    for (const config::DrillConfig& drill : config.drills) {
        const CaseFile cases = ParseCases(drill.cases, drill.group);
        for (const std::string& problem : cases.problems) {
            out.push_back({std::string(file), drill.line,
                           fmt::format("drill cases '{}': {}", drill.cases_path, problem)});
        }
    }
    return out;
}

int DrillCommand(const std::vector<std::string_view>& args,
                 const std::function<config::LoadResult(const std::string&)>& load) {
    std::string config_path, group_name, cases_path, report_path, html_path;
    DrillOptions options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        const bool has_value = i + 1 < args.size();
        if (arg == "--config" && has_value) {
            config_path = args[++i];
        } else if (arg == "--group" && has_value) {
            group_name = args[++i];
        } else if (arg == "--cases" && has_value) {
            cases_path = args[++i];
        } else if (arg == "--report" && has_value) {
            report_path = args[++i];
        } else if (arg == "--html" && has_value) {
            html_path = args[++i];
        } else if (arg == "--concurrency" && has_value &&
                   ReadNumber(args[i + 1], options.concurrency) && options.concurrency >= 1 &&
                   options.concurrency <= 256) {
            ++i;
        } else if (arg == "--max-cost" && has_value && ReadNumber(args[i + 1], options.max_cost) &&
                   options.max_cost >= 0) {
            ++i;
        } else {
            fmt::print(stderr, "switchyard drill: unexpected '{}'\n{}", arg, kUsage);
            return 2;
        }
    }
    if (config_path.empty() || group_name.empty() || cases_path.empty()) {
        fmt::print(stderr, "{}", kUsage);
        return 2;
    }
    const config::LoadResult loaded = load(config_path);
    if (!loaded.problems.empty()) {
        for (const auto& problem : loaded.problems) fmt::print(stderr, "{}\n", problem.ToString());
        return 2;
    }
    const config::Config& config = *loaded.config;
    const config::ModelGroup* group = config.FindGroup(group_name);
    if (group == nullptr) {
        fmt::print(stderr, "switchyard drill: the config has no model group '{}'\n", group_name);
        return 2;
    }
    if (group->mode != config::GroupMode::kChat) {
        fmt::print(stderr, "switchyard drill: '{}' serves embeddings; drills check chat answers\n",
                   group_name);
        return 2;
    }
    const std::optional<std::string> text = ReadWhole(cases_path);
    if (!text || text->size() > kMaxCasesBytes) {
        fmt::print(stderr, "{}: cannot read the cases (at most 64 MiB)\n", cases_path);
        return 2;
    }
    const CaseFile cases = ParseCases(*text, group_name);
    if (!cases.problems.empty()) {
        for (const std::string& problem : cases.problems) {
            fmt::print(stderr, "{}:{}\n", cases_path, problem);
        }
        return 2;
    }

    const core::RealClock clock;
    asio::io_context ioc(1);
    observe::Metrics metrics(1);
    upstream::TlsContexts tls(config);
    upstream::Watchdog watchdog(ioc.get_executor(), clock);
    upstream::ConnectionPool pool(ioc.get_executor(), tls, metrics, watchdog);
    watchdog.Start();
    std::optional<DrillReport> report;
    const Admit every_call;  // named: g++ 12 may mishandle a temporary argument of a coroutine
    asio::co_spawn(ioc, RunDrill(pool, clock, config, *group, cases.cases, options, every_call),
                   [&](const std::exception_ptr& error, DrillReport result) {
                       if (error) {
                           try {
                               std::rethrow_exception(error);
                           } catch (const std::exception& e) {
                               fmt::print(stderr, "switchyard drill: {}\n", e.what());
                           }
                       } else {
                           report = std::move(result);
                       }
                       ioc.stop();
                   });
    ioc.run();
    if (!report) return 2;
    fmt::print("{}", ReportTable(*report));
    if (!report_path.empty() && !WriteWhole(report_path, ReportJson(*report) + "\n")) {
        fmt::print(stderr, "{}: cannot write the report\n", report_path);
        return 2;
    }
    if (!html_path.empty() && !WriteWhole(html_path, ReportHtml(*report))) {
        fmt::print(stderr, "{}: cannot write the page\n", html_path);
        return 2;
    }
    return report->Passed() ? 0 : 1;
}

}  // namespace switchyard::drills
