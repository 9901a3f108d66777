#include "fault_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchyard::mock {
namespace {

using std::chrono::milliseconds;

FaultSpec ParseOk(std::string_view text) {
    const ParsedFaultSpec parsed = ParseFaultSpec(text);
    EXPECT_TRUE(parsed.ok()) << "'" << text << "': " << parsed.error;
    return parsed.spec;
}

std::string ParseError(std::string_view text) {
    const ParsedFaultSpec parsed = ParseFaultSpec(text);
    EXPECT_FALSE(parsed.ok()) << "'" << text << "' was accepted";
    return parsed.error;
}

TEST(ParseFaultSpec, EmptySpecInjectsNothing) {
    for (const char* text : {"", " ", ";", " ; ;\t"}) {
        const FaultSpec spec = ParseOk(text);
        EXPECT_FALSE(spec.status);
        EXPECT_FALSE(spec.error);
        EXPECT_FALSE(spec.ErrorStatus());
        EXPECT_FALSE(spec.CutAfterChunks());
        EXPECT_FALSE(spec.stall || spec.reset || spec.close);
        EXPECT_EQ(spec.probability, 1.0);
        EXPECT_EQ(spec.delay_headers, milliseconds(0));
    }
}

TEST(ParseFaultSpec, Status) {
    EXPECT_EQ(ParseOk("status=429").status, 429);
    EXPECT_EQ(ParseOk("status=529").ErrorStatus(), 529);
    EXPECT_EQ(ParseOk("status=400").status, 400);
    EXPECT_EQ(ParseOk("status=599").status, 599);
    for (const char* bad : {"status=399", "status=600", "status=200", "status=abc", "status=4O4",
                            "status=429.0", "status=-429", "status=+429"}) {
        EXPECT_NE(ParseError(bad).find("status"), std::string::npos) << bad;
    }
}

TEST(ParseFaultSpec, EveryNamedError) {
    const std::pair<const char*, int> cases[] = {
        {"rate_limit", 429},
        {"insufficient_quota", 429},
        {"credit_balance_exhausted", 429},
        {"organization_spend_limit", 429},
        {"project_spend_limit", 429},
        {"context_length", 400},
        {"content_policy", 400},
        {"server_overloaded", 503},
        {"server_error", 500},
        {"invalid_api_key", 401},
        {"model_not_found", 404},
        {"timeout", 504},
        {"enforced_spend_limit", 429},
        {"prompt_too_long", 400},
        {"overloaded", 529},
        {"billing", 402},
    };
    for (const auto& [name, status] : cases) {
        const FaultSpec spec = ParseOk(std::string("error=") + name);
        ASSERT_TRUE(spec.error) << name;
        EXPECT_EQ(NamedErrorName(*spec.error), name);
        EXPECT_EQ(NamedErrorStatus(*spec.error), status) << name;
        EXPECT_EQ(spec.ErrorStatus(), status) << name;
        EXPECT_EQ(NamedErrorFromName(name), spec.error);
    }
    EXPECT_NE(ParseError("error=ratelimit").find("one of rate_limit"), std::string::npos);
    EXPECT_FALSE(NamedErrorFromName("RATE_LIMIT"));
}

TEST(ParseFaultSpec, StatusWinsOverNamedErrorForTheStatusLine) {
    const FaultSpec spec = ParseOk("error=insufficient_quota;status=403");
    EXPECT_EQ(spec.ErrorStatus(), 403);
    EXPECT_EQ(spec.error, NamedError::kInsufficientQuota);
}

TEST(ParseFaultSpec, RetryHeaders) {
    EXPECT_EQ(ParseOk("retry_after=2").retry_after_s, 2.0);
    EXPECT_EQ(ParseOk("retry_after=0.25").retry_after_s, 0.25);
    EXPECT_EQ(ParseOk("retry_after=0").retry_after_s, 0.0);
    EXPECT_EQ(ParseOk("retry_after_date=30").retry_after_date_s, 30.0);
    EXPECT_EQ(ParseOk("retry_after_ms=1500").retry_after_ms, 1500.0);
    EXPECT_EQ(ParseOk("retry_after_ms=12.5").retry_after_ms, 12.5);
    EXPECT_EQ(ParseOk("x_should_retry=true").x_should_retry, true);
    EXPECT_EQ(ParseOk("x_should_retry=false").x_should_retry, false);
    for (const char* bad :
         {"retry_after=-1", "retry_after=soon", "retry_after=inf", "retry_after=nan",
          "retry_after=1e30", "retry_after_date=-5", "retry_after_ms=x", "retry_after_ms=-0.5",
          "x_should_retry=1", "x_should_retry=yes", "x_should_retry=TRUE"}) {
        ParseError(bad);
    }
}

TEST(ParseFaultSpec, RetryAfterAndRetryAfterDateAreExclusive) {
    EXPECT_NE(ParseError("retry_after=1;retry_after_date=1").find("cannot be combined"),
              std::string::npos);
    const FaultSpec spec = ParseOk("retry_after=1;retry_after_ms=1000");
    EXPECT_EQ(spec.retry_after_s, 1.0);
    EXPECT_EQ(spec.retry_after_ms, 1000.0);
}

TEST(ParseFaultSpec, Delays) {
    const FaultSpec spec =
        ParseOk("delay_headers_ms=100;delay_first_chunk_ms=200;delay_chunks_ms=5");
    EXPECT_EQ(spec.delay_headers, milliseconds(100));
    EXPECT_EQ(spec.delay_first_chunk, milliseconds(200));
    EXPECT_EQ(spec.delay_chunks, milliseconds(5));
    EXPECT_EQ(ParseOk("delay_headers_ms=3600000").delay_headers, milliseconds(3'600'000));
    for (const char* bad :
         {"delay_headers_ms=-1", "delay_headers_ms=3600001", "delay_first_chunk_ms=1.5",
          "delay_chunks_ms=fast", "delay_chunks_ms=99999999999999999999"}) {
        ParseError(bad);
    }
}

TEST(ParseFaultSpec, Chunks) {
    EXPECT_EQ(ParseOk("chunks=0").chunks, 0);
    EXPECT_EQ(ParseOk("chunks=50").chunks, 50);
    ParseError("chunks=-1");
    ParseError("chunks=1000001");
    ParseError("chunks=ten");
}

TEST(ParseFaultSpec, TruncatedBody) {
    EXPECT_EQ(ParseOk("truncate_body=10").truncate_body, 10);
    EXPECT_EQ(ParseOk("status=500;truncate_body=0").truncate_body, 0);
    ParseError("truncate_body=-1");
    ParseError("truncate_body=x");
}

TEST(ParseFaultSpec, MidStreamFaults) {
    EXPECT_EQ(ParseOk("error_after_chunks=3").CutAfterChunks(), 3);
    EXPECT_EQ(ParseOk("reset_after_chunks=0").CutAfterChunks(), 0);
    EXPECT_EQ(ParseOk("stall_after_chunks=7").CutAfterChunks(), 7);
    EXPECT_EQ(ParseOk("end_after_chunks=2").CutAfterChunks(), 2);
    ParseError("end_after_chunks=-1");
    ParseError("end_after_chunks=1;reset_after_chunks=1");
    ParseError("status=500;end_after_chunks=1");
    ParseError("error_after_chunks=-2");
    ParseError("reset_after_chunks=x");
    ParseError("stall_after_chunks=");
}

TEST(ParseFaultSpec, ErrorNamesTheInStreamBodyOfErrorAfterChunks) {
    const FaultSpec spec = ParseOk("error=rate_limit;error_after_chunks=2");
    EXPECT_EQ(spec.error, NamedError::kRateLimit);
    EXPECT_EQ(spec.CutAfterChunks(), 2);
    EXPECT_FALSE(spec.ErrorStatus()) << "the stream itself starts with 200";
}

TEST(ParseFaultSpec, AnErrorWithoutDataIsAnInStreamErrorOnly) {
    const FaultSpec spec = ParseOk("error_after_chunks=1;error_without_data=1");
    EXPECT_TRUE(spec.error_without_data);
    EXPECT_EQ(spec.CutAfterChunks(), 1);
    ParseError("error_without_data=1");
    ParseError("end_after_chunks=1;error_without_data=1");
    ParseError("error=rate_limit;error_after_chunks=1;error_without_data=1");
}

TEST(ParseFaultSpec, Flags) {
    EXPECT_TRUE(ParseOk("stall=1").stall);
    EXPECT_TRUE(ParseOk("reset=true").reset);
    EXPECT_TRUE(ParseOk("close=1").close);
    EXPECT_FALSE(ParseOk("close=0").close);
    EXPECT_FALSE(ParseOk("reset=false").reset);
    EXPECT_TRUE(ParseOk("tool_use=1").tool_use);
    EXPECT_FALSE(ParseOk("tool_use=0").tool_use);
    EXPECT_FALSE(ParseOk("").tool_use);
    ParseError("tool_use=2");
    ParseError("stall=2");
    ParseError("reset=yes");
    ParseError("close=on");
}

TEST(ParseFaultSpec, WaysOfEndingEarlyAreExclusive) {
    for (const char* bad :
         {"stall=1;reset=1", "reset=1;error_after_chunks=1",
          "error_after_chunks=1;stall_after_chunks=1", "reset_after_chunks=1;stall=1",
          "stall_after_chunks=2;reset_after_chunks=2"}) {
        EXPECT_NE(ParseError(bad).find("cannot be combined"), std::string::npos) << bad;
    }
    for (const char* bad : {"status=500;error_after_chunks=1", "status=500;reset=1",
                            "error=rate_limit;stall=1", "error=timeout;reset_after_chunks=1"}) {
        EXPECT_NE(ParseError(bad).find("cannot be combined"), std::string::npos) << bad;
    }
    // A disabled flag ends nothing, so it combines with anything.
    EXPECT_EQ(ParseOk("stall=0;reset=0;status=500").ErrorStatus(), 500);
    // close only changes what happens after the response.
    EXPECT_TRUE(ParseOk("status=503;close=1;delay_headers_ms=10").close);
}

TEST(ParseFaultSpec, ProbabilityBounds) {
    EXPECT_EQ(ParseOk("probability=0").probability, 0.0);
    EXPECT_EQ(ParseOk("probability=1").probability, 1.0);
    EXPECT_EQ(ParseOk("probability=0.25").probability, 0.25);
    EXPECT_EQ(ParseOk("probability=1.0").probability, 1.0);
    EXPECT_EQ(ParseOk("probability=1e-3").probability, 0.001);
    for (const char* bad :
         {"probability=-0.01", "probability=1.01", "probability=2", "probability=nan",
          "probability=inf", "probability=half", "probability=50%"}) {
        EXPECT_NE(ParseError(bad).find("[0, 1]"), std::string::npos) << bad;
    }
}

TEST(ParseFaultSpec, BlanksAroundTokensKeysAndValues) {
    const FaultSpec spec =
        ParseOk("  status = 503 ;\terror=server_overloaded ; retry_after= 1.5;; close =1 ;");
    EXPECT_EQ(spec.status, 503);
    EXPECT_EQ(spec.error, NamedError::kServerOverloaded);
    EXPECT_EQ(spec.retry_after_s, 1.5);
    EXPECT_TRUE(spec.close);
}

TEST(ParseFaultSpec, MalformedTokens) {
    EXPECT_NE(ParseError("status").find("expected key=value"), std::string::npos);
    EXPECT_NE(ParseError("=5").find("missing key"), std::string::npos);
    EXPECT_NE(ParseError("status=").find("missing value for status"), std::string::npos);
    EXPECT_NE(ParseError("status=500 503").find("status"), std::string::npos);
    EXPECT_NE(ParseError("status=500,chunks=3").find("status"), std::string::npos);
}

TEST(ParseFaultSpec, UnknownKey) {
    EXPECT_EQ(ParseError("stauts=500"), "unknown key 'stauts'");
    EXPECT_EQ(ParseError("Status=500"), "unknown key 'Status'");
    EXPECT_EQ(ParseError("chunks=3;delay_ms=5"), "unknown key 'delay_ms'");
}

TEST(ParseFaultSpec, DuplicateKey) {
    EXPECT_EQ(ParseError("status=500;status=503"), "duplicate key status");
    EXPECT_EQ(ParseError("chunks=1; chunks =1"), "duplicate key chunks");
}

TEST(ParseFaultSpec, EveryKeyTogether) {
    const FaultSpec spec = ParseOk(
        "error=context_length;retry_after_date=5;retry_after_ms=250;x_should_retry=false;"
        "delay_headers_ms=1;delay_first_chunk_ms=2;delay_chunks_ms=3;chunks=9;"
        "error_after_chunks=4;close=1;tool_use=1;probability=0.5");
    EXPECT_EQ(spec.error, NamedError::kContextLength);
    EXPECT_EQ(spec.retry_after_date_s, 5.0);
    EXPECT_EQ(spec.retry_after_ms, 250.0);
    EXPECT_EQ(spec.x_should_retry, false);
    EXPECT_EQ(spec.delay_headers, milliseconds(1));
    EXPECT_EQ(spec.delay_first_chunk, milliseconds(2));
    EXPECT_EQ(spec.delay_chunks, milliseconds(3));
    EXPECT_EQ(spec.chunks, 9);
    EXPECT_EQ(spec.CutAfterChunks(), 4);
    EXPECT_TRUE(spec.close);
    EXPECT_TRUE(spec.tool_use);
    EXPECT_EQ(spec.probability, 0.5);
}

TEST(ParseFaultSpec, InterimCodes) {
    EXPECT_EQ(ParseOk("interim=100").interim, std::vector<int>{100});
    EXPECT_EQ(ParseOk("interim=103,100").interim, (std::vector<int>{103, 100}));
    EXPECT_EQ(ParseOk("interim= 102 , 199 ,100").interim, (std::vector<int>{102, 199, 100}));
    EXPECT_EQ(ParseOk("interim=100,100,100,100,100,100,100,100,100,100,100,100,100,100,100,100")
                  .interim.size(),
              16u);
    EXPECT_TRUE(ParseOk("").interim.empty());
    for (const char* bad :
         {"interim=101", "interim=99", "interim=200", "interim=100,", "interim=,100",
          "interim=100,,103", "interim=1e2", "interim=100;103", "interim=100 103",
          "interim=100,100,100,100,100,100,100,100,100,100,100,100,100,100,100,100,100"}) {
        const std::string error = ParseError(bad);
        EXPECT_TRUE(error.starts_with("bad value for interim") || error.starts_with("expected"))
            << bad << ": " << error;
    }
    EXPECT_EQ(ParseError("interim=100,101"),
              "bad value for interim: '100,101' (expected 1 to 16 comma-separated codes in [100, "
              "199] except 101)");
}

TEST(ParseFaultSpec, InterimNeedsAResponseHead) {
    EXPECT_EQ(ParseError("interim=100;stall=1"), "interim and stall cannot be combined");
    EXPECT_EQ(ParseError("interim=100;reset=1"), "interim and reset cannot be combined");
    // Every other answer, a stream cut short included, starts with a head.
    for (const char* ok : {"interim=100;status=503", "interim=103;reset_after_chunks=1",
                           "interim=100;stall_after_chunks=0", "interim=100;delay_headers_ms=5",
                           "interim=100;one_write=1", "interim=100;stall=0"}) {
        EXPECT_FALSE(ParseOk(ok).interim.empty()) << ok;
    }
}

TEST(ParseFaultSpec, LateResponse) {
    EXPECT_EQ(ParseOk("late_response_ms=0").late_response, milliseconds(0));
    EXPECT_EQ(ParseOk("late_response_ms=3600000").late_response, milliseconds(3'600'000));
    EXPECT_FALSE(ParseOk("").late_response);
    for (const char* bad : {"late_response_ms=-1", "late_response_ms=3600001",
                            "late_response_ms=1.5", "late_response_ms=soon"}) {
        EXPECT_TRUE(ParseError(bad).starts_with("bad value for late_response_ms")) << bad;
    }
    EXPECT_EQ(ParseError("late_response_ms=5;close=1"),
              "late_response_ms and close cannot be combined");
    for (const char* ending : {"reset=1", "stall=1", "error_after_chunks=1", "reset_after_chunks=1",
                               "stall_after_chunks=1", "end_after_chunks=1"}) {
        const std::string spec = std::string("late_response_ms=5;") + ending;
        EXPECT_NE(ParseError(spec).find("cannot be combined"), std::string::npos) << spec;
    }
    // Any complete answer may be followed by one: an error, a cut body, a stream.
    for (const char* ok : {"late_response_ms=5;status=503", "late_response_ms=5;truncate_body=3",
                           "late_response_ms=5;close=0", "late_response_ms=5;one_write=1",
                           "late_response_ms=5;body=error", "late_response_ms=5;interim=100"}) {
        EXPECT_TRUE(ParseOk(ok).late_response) << ok;
    }
}

TEST(ParseFaultSpec, BodyFaults) {
    EXPECT_EQ(ParseOk("body=error").body, BodyFault::kError);
    EXPECT_EQ(ParseOk("body=wrong_shape").body, BodyFault::kWrongShape);
    EXPECT_FALSE(ParseOk("").body);
    EXPECT_EQ(ParseError("body=Error"),
              "bad value for body: 'Error' (expected error or wrong_shape)");
    ParseError("body=1");
    EXPECT_EQ(ParseError("body=error;status=500"), "body and status cannot be combined");
    EXPECT_EQ(ParseError("status=500;body=wrong_shape"), "body and status cannot be combined");
    EXPECT_EQ(ParseError("body=error;error=rate_limit"), "body and error cannot be combined");
    EXPECT_EQ(ParseError("body=error;event_bytes=10"), "body and event_bytes cannot be combined");
    for (const char* ending : {"reset=1", "stall=1", "error_after_chunks=1", "reset_after_chunks=1",
                               "stall_after_chunks=1", "end_after_chunks=1"}) {
        const std::string spec = std::string("body=wrong_shape;") + ending;
        EXPECT_NE(ParseError(spec).find("cannot be combined"), std::string::npos) << spec;
    }
    // Headers, delays, a cut body and what happens after the answer still apply.
    const FaultSpec spec = ParseOk(
        "body=error;retry_after=1;delay_headers_ms=2;truncate_body=5;close=1;interim=100;"
        "x_should_retry=true");
    EXPECT_EQ(spec.body, BodyFault::kError);
    EXPECT_FALSE(spec.ErrorStatus()) << "the status line stays 200";
}

TEST(ParseFaultSpec, EventBytes) {
    EXPECT_EQ(ParseOk("event_bytes=1").event_bytes, 1);
    EXPECT_EQ(ParseOk("event_bytes=1048576").event_bytes, 1 << 20);
    EXPECT_EQ(ParseOk("event_bytes=268435456").event_bytes, 256 << 20);
    for (const char* bad : {"event_bytes=0", "event_bytes=268435457", "event_bytes=-1",
                            "event_bytes=1k", "event_bytes=1e6"}) {
        EXPECT_TRUE(ParseError(bad).starts_with("bad value for event_bytes")) << bad;
    }
    // Padding the first event still leaves every way of ending the stream open.
    EXPECT_EQ(ParseOk("event_bytes=100;error_after_chunks=1").event_bytes, 100);
    EXPECT_EQ(ParseOk("event_bytes=100;one_write=1;chunks=3").event_bytes, 100);
}

TEST(ParseFaultSpec, EveryNewKeyTogether) {
    const FaultSpec spec =
        ParseOk("interim=103,100;late_response_ms=50;event_bytes=4096;delay_headers_ms=1;chunks=2");
    EXPECT_EQ(spec.interim, (std::vector<int>{103, 100}));
    EXPECT_EQ(spec.late_response, milliseconds(50));
    EXPECT_EQ(spec.event_bytes, 4096);
    EXPECT_FALSE(spec.body);
    EXPECT_FALSE(spec.ErrorStatus());
    EXPECT_FALSE(spec.CutAfterChunks());
}

TEST(ParseFaultSpec, BatchKeys) {
    const FaultSpec timed = ParseOk("batch_ms=1500; batch_expire=1");
    EXPECT_TRUE(timed.batch);
    EXPECT_EQ(timed.batch_ms, milliseconds(1500));
    EXPECT_TRUE(timed.batch_expire);
    EXPECT_FALSE(timed.batch_refuse);
    EXPECT_FALSE(timed.ErrorStatus());

    EXPECT_EQ(ParseOk("batch_refuse=queue_limit").batch_refuse, BatchRefusal::kQueueLimit);
    EXPECT_EQ(ParseOk("batch_refuse=model").batch_refuse, BatchRefusal::kModel);
    EXPECT_EQ(ParseOk("batch_ms=0").batch_ms, milliseconds(0));
    EXPECT_EQ(ParseOk("batch_ms=86400000").batch_ms, milliseconds(86'400'000));
    // A batch key set to its default still makes a batch spec.
    EXPECT_TRUE(ParseOk("batch_expire=0").batch);
    EXPECT_FALSE(ParseOk("status=500").batch);
    EXPECT_FALSE(ParseOk("").batch);

    EXPECT_TRUE(ParseError("batch_ms=86400001").starts_with("bad value for batch_ms"));
    EXPECT_TRUE(ParseError("batch_ms=-1").starts_with("bad value for batch_ms"));
    EXPECT_TRUE(ParseError("batch_expire=yes").starts_with("bad value for batch_expire"));
    EXPECT_EQ(ParseError("batch_refuse=quota"),
              "bad value for batch_refuse: 'quota' (expected queue_limit or model)");
    EXPECT_EQ(ParseError("batch_refuse=model;batch_ms=5"),
              "batch_refuse and batch_ms cannot be combined");
    EXPECT_EQ(ParseError("batch_expire=1;batch_refuse=queue_limit"),
              "batch_refuse and batch_expire cannot be combined");
    // A spec acts on a batch creation or on a request, never both.
    for (const char* mixed : {"batch_ms=5;status=500", "status=500;batch_ms=5",
                              "probability=0.5;batch_expire=1", "batch_refuse=model;stall=1"}) {
        EXPECT_NE(ParseError(mixed).find("cannot be combined with other keys"), std::string::npos)
            << mixed;
    }
    EXPECT_EQ(ParseError("batch_ms=5;status=500"),
              "batch_ms, batch_expire and batch_refuse cannot be combined with other keys "
              "(status)");
}

}  // namespace
}  // namespace switchyard::mock
