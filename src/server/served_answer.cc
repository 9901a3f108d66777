#include "server/served_answer.h"

#include <fmt/format.h>

#include "api/usage.h"
#include "api/whole_answer.h"
#include "server/http_io.h"

namespace switchyard::server {
namespace {

// Upstream response headers a client may act on, passed through unchanged.
constexpr std::string_view kPassThroughHeaders[] = {"retry-after", "retry-after-ms"};

}  // namespace

void NoteUsage(RequestContext& ctx, std::string_view json) {
    if (const auto usage = api::FindUsage(json)) {
        if (usage->input_tokens >= 0) ctx.record.input_tokens = usage->input_tokens;
        if (usage->output_tokens >= 0) ctx.record.output_tokens = usage->output_tokens;
    }
}

std::int64_t UnixNow(const RequestContext& ctx) {
    return std::chrono::duration_cast<std::chrono::seconds>(
               ctx.Context().clock.WallNow().time_since_epoch())
        .count();
}

namespace {

// Calls `set(name, value)` for each header that says who served.
template <class Set>
void ForEachServedHeader(const RequestContext& ctx, Set set) {
    set("x-switchyard-model-group", ctx.model_group);
    set("x-switchyard-deployment", ctx.deployment);
    if (!ctx.region.empty()) set("x-switchyard-region", ctx.region);
    set("x-switchyard-model", ctx.model);
    char digits[2][16];
    const auto attempts = fmt::format_to_n(digits[0], sizeof digits[0], "{}", ctx.record.attempts);
    const auto depth =
        fmt::format_to_n(digits[1], sizeof digits[1], "{}", ctx.record.fallback_depth);
    set("x-switchyard-attempts", std::string_view(digits[0], attempts.out - digits[0]));
    set("x-switchyard-fallback-depth", std::string_view(digits[1], depth.out - digits[1]));
    if (!ctx.upstream_request_id.empty()) {
        set("x-request-id", ctx.upstream_request_id);
        set("x-switchyard-upstream-request-id", ctx.upstream_request_id);
    }
    if (!ctx.validation.empty()) set("x-switchyard-validation", ctx.validation);
    if (ctx.record.panic) set("x-switchyard-panic", std::string_view("benched-deployment-tried"));
    if (ctx.record.hedged) {
        set("x-switchyard-hedged",
            std::string_view(ctx.record.hedge_answered ? "hedge-answered" : "first-answered"));
    }
}

}  // namespace

void AppendServedHeaders(const RequestContext& ctx, std::string& lines) {
    ForEachServedHeader(ctx, [&](std::string_view name, std::string_view value) {
        AppendHeader(lines, name, value);
    });
}

void SetServedHeaders(const RequestContext& ctx, http::fields& fields) {
    ForEachServedHeader(
        ctx, [&](std::string_view name, std::string_view value) { fields.set(name, value); });
}

asio::awaitable<void> WriteUpstreamAnswer(RequestContext& ctx,
                                          const upstream::ResponseHeader& header, std::string& body,
                                          api::Wire upstream) {
    // The hot path of every JSON answer: header lines go straight into one string.
    std::string lines;
    lines.reserve(512);
    const std::string_view content_type = header[http::field::content_type];
    if (ctx.wire != upstream) {
        auto translated =
            api::TranslateWholeAnswer(body, header.result_int(), upstream, ctx.wire, UnixNow(ctx));
        // Error envelopes always translate; success bodies arrive translated (see the contract).
        if (auto* text = std::get_if<std::string>(&translated)) body = std::move(*text);
        AppendHeader(lines, "Content-Type", "application/json");
    } else {
        AppendHeader(lines, "Content-Type",
                     content_type.empty() ? std::string_view("application/json") : content_type);
    }
    for (std::string_view name : kPassThroughHeaders) {
        if (const auto it = header.find(name); it != header.end()) {
            AppendHeader(lines, name, it->value());
        }
    }
    AppendServedHeaders(ctx, lines);
    if (header.result() == http::status::ok) NoteUsage(ctx, body);
    const Reply reply{header.result_int(), &lines, body};
    co_await Respond(ctx, reply);
}

}  // namespace switchyard::server
