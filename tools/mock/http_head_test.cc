#include "http_head.h"

#include <gtest/gtest.h>

namespace switchyard::mock {
namespace {

using std::chrono::milliseconds;

TEST(FormatImfFixdate, Rfc7231Example) {
    // 1445412480 is Wed, 21 Oct 2015 07:28:00 GMT.
    const auto time = std::chrono::system_clock::from_time_t(1445412480);
    EXPECT_EQ(FormatImfFixdate(time), "Wed, 21 Oct 2015 07:28:00 GMT");
}

TEST(AppendFaultHeaders, RetryHeaders) {
    FaultSpec spec;
    spec.retry_after_s = 1.5;
    spec.retry_after_ms = 250;
    spec.x_should_retry = false;
    std::string out;
    AppendFaultHeaders(out, spec, std::chrono::system_clock::from_time_t(0));
    EXPECT_EQ(out, "retry-after: 1.5\r\nretry-after-ms: 250\r\nx-should-retry: false\r\n");

    FaultSpec dated;
    dated.retry_after_date_s = 2.5;
    out.clear();
    // Rounded up to whole seconds so that a client never waits less than asked.
    AppendFaultHeaders(out, dated,
                       std::chrono::system_clock::from_time_t(1445412480) + milliseconds(200));
    EXPECT_EQ(out, "retry-after: Wed, 21 Oct 2015 07:28:03 GMT\r\n");
}

TEST(AppendHeadStart, FramingAndConnection) {
    std::string out;
    AppendHeadStart(out, 429, "application/json", 12, true);
    EXPECT_EQ(out,
              "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
              "Content-Length: 12\r\n");
    out.clear();
    AppendHeadStart(out, 200, "text/event-stream; charset=utf-8", std::nullopt, false);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
              "Transfer-Encoding: chunked\r\nConnection: close\r\n");
    EXPECT_EQ(ReasonPhrase(529), "Site Overloaded");
}

TEST(AppendInterimResponse, ContinueEarlyHintsAndOthers) {
    std::string out;
    AppendInterimResponse(out, 100);
    EXPECT_EQ(out, "HTTP/1.1 100 Continue\r\n\r\n");
    out.clear();
    AppendInterimResponse(out, 103);
    EXPECT_EQ(out, "HTTP/1.1 103 Early Hints\r\nLink: </hint.css>; rel=preload\r\n\r\n");
    out.clear();
    AppendInterimResponse(out, 102);
    AppendInterimResponse(out, 199);
    EXPECT_EQ(out, "HTTP/1.1 102 Interim\r\n\r\nHTTP/1.1 199 Interim\r\n\r\n");
}

}  // namespace
}  // namespace switchyard::mock
