// switchyard-sim: runs scenario files through Switchyard's own engine, health, budgets, backoff
// and headroom code on a virtual clock (docs/evidence/README.md).
#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "contention.h"
#include "gateway_run.h"
#include "scenario.h"

namespace {

using namespace switchyard::sim;

constexpr const char* kUsage =
    "usage: switchyard-sim SCENARIO.yaml [--seed N] [--runs N] [--set PATH=VALUE]...\n"
    "                      [--csv FILE] [--timeline FILE] [--json]\n"
    "Runs the scenario (and its variants and sweep) and prints a table of figures.\n"
    "  --seed N          the first seed (default: the scenario's)\n"
    "  --runs N          repetitions per variant, seeds N, N+1, ...; figures are means\n"
    "  --set PATH=VALUE  overrides a value of the file, e.g. gateway.retry.base_ms=250\n"
    "  --csv FILE        one row per variant and sweep value\n"
    "  --timeline FILE   gateway scenarios with timeline_s: requests, ok and upstream calls\n"
    "                    per bucket, per variant (first seed)\n"
    "  --json            the figures as JSON on stdout instead of the table\n"
    "  --describe        prints the first run's gateway config, providers and clients as JSON\n"
    "                    (for a live run of the same scenario) and runs nothing\n";

struct Options {
    std::string scenario;
    std::optional<std::uint64_t> seed;
    std::optional<int> runs;
    std::vector<std::string> sets;
    std::string csv;
    std::string timeline;
    bool json = false;
    bool describe = false;
};

Options ParseArgs(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (arg == "--seed") {
            o.seed = std::stoull(value());
        } else if (arg == "--runs") {
            o.runs = std::stoi(value());
        } else if (arg == "--set") {
            o.sets.push_back(value());
        } else if (arg == "--csv") {
            o.csv = value();
        } else if (arg == "--timeline") {
            o.timeline = value();
        } else if (arg == "--json") {
            o.json = true;
        } else if (arg == "--describe") {
            o.describe = true;
        } else if (!arg.empty() && arg[0] == '-') {
            throw std::runtime_error("unknown option " + arg);
        } else if (o.scenario.empty()) {
            o.scenario = arg;
        } else {
            throw std::runtime_error("one scenario file at a time");
        }
    }
    if (o.scenario.empty()) throw std::runtime_error("no scenario file given");
    return o;
}

std::string Number(double v) {
    if (v == static_cast<double>(static_cast<long long>(v)) && std::abs(v) < 1e15) {
        return fmt::format("{}", static_cast<long long>(v));
    }
    return fmt::format("{:.4g}", v);
}

std::string Label(const RunSpec& run) {
    std::string label = run.variant.empty() ? "base" : run.variant;
    if (!run.sweep.empty()) label += "@" + run.sweep;
    return label;
}

struct GatewayOutput {
    const RunSpec* run;
    Figures figures;  // means over the seeds
    std::vector<TimelineRow> timeline;
};

// Runs each scenario variant once per seed; its figures are the means over the seeds, its
// timeline the first seed's.
std::vector<GatewayOutput> RunVariants(const Options& o, const std::vector<RunSpec>& runs) {
    std::vector<GatewayOutput> outputs;
    for (const RunSpec& run : runs) {
        const Scenario& s = run.scenario;
        const int repetitions = o.runs.value_or(s.runs);
        const std::uint64_t seed = o.seed.value_or(s.seed);
        GatewayOutput out{&run, {}, {}};
        for (int r = 0; r < repetitions; ++r) {
            RunResult result = RunGatewayScenario(s, seed + static_cast<std::uint64_t>(r));
            if (r == 0) {
                out.figures = result.figures;
                for (auto& [name, value] : out.figures) value /= repetitions;
                out.timeline = std::move(result.timeline);
                continue;
            }
            for (std::size_t i = 0; i < result.figures.size(); ++i) {
                out.figures[i].second += result.figures[i].second / repetitions;
            }
        }
        outputs.push_back(std::move(out));
    }
    return outputs;
}

// Every figure name, in first-seen order.
std::vector<std::string> FigureNames(const std::vector<GatewayOutput>& outputs) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const auto& out : outputs) {
        for (const auto& [name, value] : out.figures) {
            if (seen.insert(name).second) names.push_back(name);
        }
    }
    return names;
}

std::optional<double> ValueOf(const Figures& figures, const std::string& name) {
    for (const auto& [n, v] : figures) {
        if (n == name) return v;
    }
    return std::nullopt;
}

void PrintJson(const std::vector<GatewayOutput>& outputs) {
    std::string json = "[";
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const auto& out = outputs[i];
        json += fmt::format("{}{{\"variant\":\"{}\",\"sweep\":\"{}\",\"figures\":{{", i ? "," : "",
                            out.run->variant, out.run->sweep);
        for (std::size_t f = 0; f < out.figures.size(); ++f) {
            json += fmt::format("{}\"{}\":{}", f ? "," : "", out.figures[f].first,
                                out.figures[f].second);
        }
        json += "}}";
    }
    json += "]\n";
    std::fputs(json.c_str(), stdout);
}

// Figures as rows, runs as columns: a scenario has few variants and many figures.
void PrintTable(const std::vector<GatewayOutput>& outputs, const std::vector<std::string>& names) {
    std::size_t width = 8;
    for (const auto& name : names) width = std::max(width, name.size());
    std::vector<std::size_t> columns;
    std::string line = fmt::format("{:<{}}", "", width);
    for (const auto& out : outputs) {
        columns.push_back(std::max<std::size_t>(10, Label(*out.run).size()));
        line += fmt::format(" {:>{}}", Label(*out.run), columns.back());
    }
    std::puts(line.c_str());
    for (const auto& name : names) {
        line = fmt::format("{:<{}}", name, width);
        for (std::size_t c = 0; c < outputs.size(); ++c) {
            const auto v = ValueOf(outputs[c].figures, name);
            line += fmt::format(" {:>{}}", v ? Number(*v) : "-", columns[c]);
        }
        std::puts(line.c_str());
    }
}

void WriteFiguresCsv(const std::string& path, const std::vector<GatewayOutput>& outputs,
                     const std::vector<std::string>& names) {
    std::ofstream csv(path);
    csv << "variant,sweep";
    for (const auto& name : names) csv << ',' << name;
    csv << '\n';
    for (const auto& out : outputs) {
        csv << out.run->variant << ',' << out.run->sweep;
        for (const auto& name : names) {
            const auto v = ValueOf(out.figures, name);
            csv << ',' << (v ? fmt::format("{}", *v) : "");
        }
        csv << '\n';
    }
}

void WriteTimelineCsv(const std::string& path, const std::vector<GatewayOutput>& outputs) {
    std::ofstream csv(path);
    csv << "variant,sweep,start_s,requests,ok,availability_pct,upstream_calls\n";
    for (const auto& out : outputs) {
        for (const TimelineRow& row : out.timeline) {
            csv << out.run->variant << ',' << out.run->sweep << ',' << row.start_s << ','
                << row.requests << ',' << row.ok << ','
                << (row.requests
                        ? 100.0 * static_cast<double>(row.ok) / static_cast<double>(row.requests)
                        : 100.0)
                << ',' << row.upstream_calls << '\n';
        }
    }
}

int RunGateway(const Options& o, const std::vector<RunSpec>& runs) {
    const std::vector<GatewayOutput> outputs = RunVariants(o, runs);
    const std::vector<std::string> names = FigureNames(outputs);
    if (o.json) {
        PrintJson(outputs);
    } else {
        PrintTable(outputs, names);
    }
    if (!o.csv.empty()) WriteFiguresCsv(o.csv, outputs, names);
    if (!o.timeline.empty()) WriteTimelineCsv(o.timeline, outputs);
    return 0;
}

int RunContentionScenario(const Options& o, const std::vector<RunSpec>& runs) {
    std::vector<ContentionRow> rows;
    for (const RunSpec& run : runs) {
        std::vector<ContentionRow> part =
            RunContention(run.scenario.contention, o.seed.value_or(run.scenario.seed));
        rows.insert(rows.end(), part.begin(), part.end());
    }
    if (o.json) {
        std::string json = "[";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            json += fmt::format(
                "{}{{\"strategy\":\"{}\",\"clients\":{},\"calls\":{},\"time_ms\":{}}}",
                i ? "," : "", rows[i].strategy, rows[i].clients, rows[i].calls, rows[i].time_ms);
        }
        std::puts((json + "]").c_str());
    } else {
        std::puts(fmt::format("{:<14} {:>8} {:>12} {:>16} {:>12}", "strategy", "clients", "calls",
                              "calls/client", "time_ms")
                      .c_str());
        for (const ContentionRow& r : rows) {
            std::puts(fmt::format("{:<14} {:>8} {:>12.1f} {:>16.2f} {:>12.1f}", r.strategy,
                                  r.clients, r.calls, r.calls / r.clients, r.time_ms)
                          .c_str());
        }
    }
    if (!o.csv.empty()) {
        std::ofstream csv(o.csv);
        csv << "strategy,clients,calls,calls_per_client,time_ms\n";
        for (const ContentionRow& r : rows) {
            csv << r.strategy << ',' << r.clients << ',' << r.calls << ',' << r.calls / r.clients
                << ',' << r.time_ms << '\n';
        }
    }
    return 0;
}

// What a live run of `s` needs to know: the gateway's config, what each provider does and what
// the clients send.
int Describe(const Scenario& s) {
    namespace json = boost::json;
    json::object providers;
    const std::shared_ptr<const switchyard::config::Config> config = LoadGatewayConfig(s);
    for (const auto& group : config->models) {
        for (const auto& d : group.deployments) {
            providers[d.name] =
                json::object{{"model", d.model}, {"limits", ""}, {"faults", json::array()}};
        }
    }
    for (const auto& [name, model] : s.providers) {
        json::array faults;
        for (const TimedFault& f : model.faults) {
            json::object fault{{"from_s", f.from_s}, {"fault", f.text}};
            if (std::isfinite(f.to_s)) fault["to_s"] = f.to_s;
            faults.push_back(std::move(fault));
        }
        json::object& p = providers[name].as_object();
        p["limits"] = model.limits;
        p["latency_median_ms"] = model.latency.median_ms;
        p["faults"] = std::move(faults);
    }
    json::array clients;
    for (const ClientSpec& c : s.clients) {
        json::object client{{"name", c.name},
                            {"model", c.model},
                            {"rate_per_s", c.rate_per_s},
                            {"arrival", c.poisson ? "poisson" : "uniform"},
                            {"start_s", c.start_s},
                            {"stop_s", c.stop_s.value_or(s.duration_s)},
                            {"burst", c.burst},
                            {"max_tokens", c.max_tokens},
                            {"stream", c.stream},
                            {"layers", c.layers.size()}};
        if (c.deadline_ms) client["deadline_ms"] = *c.deadline_ms;
        clients.push_back(std::move(client));
    }
    const json::object out{{"name", s.name},
                           {"duration_s", s.duration_s},
                           {"gateway", s.gateway_yaml},
                           {"providers", std::move(providers)},
                           {"clients", std::move(clients)}};
    std::puts(json::serialize(out).c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options options = ParseArgs(argc, argv);
        const std::vector<RunSpec> runs = LoadScenario(options.scenario, options.sets);
        if (options.describe) return Describe(runs.front().scenario);
        if (runs.front().scenario.kind == "contention") return RunContentionScenario(options, runs);
        return RunGateway(options, runs);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "switchyard-sim: %s\n%s", e.what(), kUsage);
        return 2;
    }
}
