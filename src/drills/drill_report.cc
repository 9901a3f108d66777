#include "drills/drill_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>

namespace switchyard::drills {
namespace {

namespace json = boost::json;

// Why a case did not pass, in one line.
std::string Reason(const CaseResult& result) {
    if (result.passed) return "passed";
    if (result.skipped) return "skipped: " + result.error;
    if (!result.error_class.empty()) {
        return result.status != 0
                   ? fmt::format("{} {}: {}", result.status, result.error_class, result.error)
                   : fmt::format("{}: {}", result.error_class, result.error);
    }
    std::string out;
    for (const std::string& unmet : result.unmet) {
        if (!out.empty()) out += "; ";
        out += unmet;
    }
    return out;
}

std::string Escape(std::string_view text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

double MedianLatency(const EntryReport& entry) {
    std::vector<double> latencies;
    for (const CaseResult& result : entry.cases) {
        if (!result.skipped) latencies.push_back(result.latency_ms);
    }
    if (latencies.empty()) return 0;
    std::sort(latencies.begin(), latencies.end());
    return latencies[latencies.size() / 2];
}

double EntryCost(const EntryReport& entry) {
    double cost = 0;
    for (const CaseResult& result : entry.cases) cost += result.cost.value_or(0);
    return cost;
}

}  // namespace

std::string ReportJson(const DrillReport& report) {
    json::object out;
    out["group"] = report.group;
    out["passed"] = report.Passed();
    out["started"] = report.started;
    out["seconds"] = report.seconds;
    out["cost"] = report.cost;
    json::array entries;
    for (const EntryReport& entry : report.entries) {
        json::object e;
        e["group"] = entry.group;
        e["deployment"] = entry.deployment;
        e["model"] = entry.model;
        e["stage"] = entry.stage;
        e["depth"] = entry.depth;
        e["passed"] = entry.passed;
        e["failed"] = entry.failed;
        json::array cases;
        for (const CaseResult& result : entry.cases) {
            json::object c;
            c["id"] = result.id;
            c["passed"] = result.passed;
            c["skipped"] = result.skipped;
            c["status"] = result.status;
            c["error_class"] =
                result.error_class.empty() ? json::value() : json::value(result.error_class);
            c["error"] = result.error.empty() ? json::value() : json::value(result.error);
            json::array unmet;
            for (const std::string& u : result.unmet) unmet.emplace_back(u);
            c["unmet"] = std::move(unmet);
            c["latency_ms"] = std::round(result.latency_ms * 10) / 10;
            c["input_tokens"] = result.input_tokens;
            c["output_tokens"] = result.output_tokens;
            c["cost"] = result.cost ? json::value(*result.cost) : json::value();
            c["served_model"] = result.served_model;
            cases.push_back(std::move(c));
        }
        e["cases"] = std::move(cases);
        entries.push_back(std::move(e));
    }
    out["entries"] = std::move(entries);
    return json::serialize(out);
}

std::string ReportTable(const DrillReport& report) {
    std::size_t width = 5;
    for (const EntryReport& entry : report.entries) {
        width = std::max(width, entry.group.size() + 3 + entry.deployment.size());
    }
    std::string out = fmt::format("{:<{}}  {:<14}  {:>6}  {:>9}  {:>10}\n", "entry", width, "stage",
                                  "passed", "median ms", "cost $");
    for (const EntryReport& entry : report.entries) {
        out += fmt::format("{:<{}}  {:<14}  {:>6}  {:>9.0f}  {:>10.6f}\n",
                           entry.group + " / " + entry.deployment, width, entry.stage,
                           fmt::format("{}/{}", entry.passed, entry.passed + entry.failed),
                           MedianLatency(entry), EntryCost(entry));
    }
    for (const EntryReport& entry : report.entries) {
        for (const CaseResult& result : entry.cases) {
            if (result.passed) continue;
            out += fmt::format("FAIL {} / {} case {}: {}\n", entry.group, entry.deployment,
                               result.id, Reason(result));
        }
    }
    int failing = 0;
    for (const EntryReport& entry : report.entries) failing += entry.failed > 0 ? 1 : 0;
    out += fmt::format("{}: {} of {} entries passed every case, ${:.6f}, {:.1f} s\n", report.group,
                       report.entries.size() - static_cast<std::size_t>(failing),
                       report.entries.size(), report.cost, report.seconds);
    return out;
}

std::string ReportHtml(const DrillReport& report) {
    std::string out = fmt::format(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Drill: {0}</title>\n"
        "<style>body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:"
        "collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}"
        ".pass{{background:#d9f2d9}}.fail{{background:#f8d0d0}}.skip{{background:#eee}}"
        "</style></head><body>\n<h1>Drill of {0}: {1}</h1>\n<p>{2} entries, ${3:.6f}, {4:.1f} "
        "s</p>\n<table><tr><th>entry</th><th>stage</th><th>passed</th>",
        Escape(report.group), report.Passed() ? "passed" : "FAILED", report.entries.size(),
        report.cost, report.seconds);
    if (!report.entries.empty()) {
        for (const CaseResult& result : report.entries.front().cases) {
            out += "<th>" + Escape(result.id) + "</th>";
        }
    }
    out += "</tr>\n";
    for (const EntryReport& entry : report.entries) {
        out += fmt::format("<tr><td>{} / {} <small>({})</small></td><td>{}</td><td>{}/{}</td>",
                           Escape(entry.group), Escape(entry.deployment), Escape(entry.model),
                           entry.stage, entry.passed, entry.passed + entry.failed);
        for (const CaseResult& result : entry.cases) {
            const char* css = result.passed ? "pass" : result.skipped ? "skip" : "fail";
            out += fmt::format("<td class=\"{}\" title=\"{}\">{} <small>{:.0f} ms</small></td>",
                               css, Escape(Reason(result)),
                               result.passed    ? "pass"
                               : result.skipped ? "skipped"
                                                : "FAIL",
                               result.latency_ms);
        }
        out += "</tr>\n";
    }
    out += "</table>\n<h2>Failures</h2>\n<ul>\n";
    for (const EntryReport& entry : report.entries) {
        for (const CaseResult& result : entry.cases) {
            if (result.passed) continue;
            out += fmt::format("<li>{} / {} — case {}: {}</li>\n", Escape(entry.group),
                               Escape(entry.deployment), Escape(result.id), Escape(Reason(result)));
        }
    }
    out += "</ul>\n</body></html>\n";
    return out;
}

}  // namespace switchyard::drills
