#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "observe/span.h"
#include "routing/fallback_plan.h"

namespace switchyard::server {

struct RequestContext;
struct AttemptEnd;

// The spans of one traced request (docs/observability.md#traces): a server span for the request,
// a client span per upstream attempt and an internal span per wait, all in one trace that
// continues the client's `traceparent`. Lives in the request's context; handed to the exporter
// when the request ends. Touched by the request's own coroutine only.
class RequestTrace final {
  public:
    // The trace of an engine request, or null when it is not recorded: tracing is off, the
    // client's traceparent says "not sampled", or (without one) the sample ratio left it out.
    static std::unique_ptr<RequestTrace> Start(RequestContext& ctx,
                                               std::string_view requested_model);

    // An upstream attempt begins: its span is the parent the upstream sees. Returns the span,
    // for EndAttempt (a hedged attempt and its hedge are open at once).
    std::size_t BeginAttempt(const config::Deployment& deployment,
                             const routing::PlannedGroup& stage, bool retry, bool hedge);
    // The `traceparent` to send upstream for the attempt begun last.
    std::string UpstreamTraceParent() const;
    void EndAttempt(std::size_t span, const AttemptEnd& end, std::string_view upstream_request_id);
    void BeginWait(std::string_view reason, std::chrono::milliseconds planned);
    void EndWait();
    // The request ended: its span gets what the request record says, and every span goes to the
    // exporter.
    void Finish(RequestContext& ctx);

  private:
    RequestTrace(RequestContext& ctx, const observe::TraceId& trace_id,
                 const observe::SpanId& parent, std::string_view requested_model);
    observe::Span& Open(std::string name, observe::Span::Kind kind);
    std::int64_t NowNs() const;

    RequestContext& ctx_;
    observe::Span request_;
    std::vector<observe::Span> children_;
    std::vector<std::size_t> attempts_;  // indexes of the open attempt spans
    std::optional<std::size_t> wait_;    // index of the open wait span
    std::string answered_model_;         // the model of the attempt that answered, if any
};

// The traceparent for an upstream attempt: the trace's when the request is traced, else the
// client's own (valid) one passed on unchanged, else empty.
std::string UpstreamTraceParent(const RequestContext& ctx);

}  // namespace switchyard::server
