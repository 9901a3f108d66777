#include "embeddings_wire.h"

#include <gtest/gtest.h>

#include <bit>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::mock::embeddings {
namespace {
namespace json = boost::json;

json::object ErrorOf(const std::string& body) { return json::parse(body).at("error").as_object(); }

double Length(const std::vector<float>& vector) {
    double sum = 0;
    for (const float x : vector) sum += static_cast<double>(x) * x;
    return std::sqrt(sum);
}

// Decodes standard base64 (test helper; no validation).
std::string DecodeBase64(std::string_view text) {
    constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::uint32_t buffer = 0;
    int bits = 0;
    for (const char c : text) {
        if (c == '=') break;
        buffer = (buffer << 6) | static_cast<std::uint32_t>(kAlphabet.find(c));
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> bits) & 0xff);
        }
    }
    return out;
}

TEST(ParseEmbeddingsRequest, ReadsTheFourInputForms) {
    auto parsed =
        ParseEmbeddingsRequest(R"({"model":"text-embedding-3-small","input":"abcdefgh"})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_EQ(parsed.request.model, "text-embedding-3-small");
    ASSERT_EQ(parsed.request.inputs.size(), 1U);
    EXPECT_EQ(parsed.request.inputs[0].text, "abcdefgh");
    EXPECT_EQ(parsed.request.dimensions, kDefaultDimensions);
    EXPECT_FALSE(parsed.request.base64);
    EXPECT_EQ(parsed.request.prompt_tokens, 2);  // 8 characters / 4.

    parsed = ParseEmbeddingsRequest(R"({"model":"m","input":["abcd","efgh","ij"]})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_EQ(parsed.request.inputs.size(), 3U);
    EXPECT_EQ(parsed.request.text_chars, 10);
    EXPECT_EQ(parsed.request.prompt_tokens, 2);

    parsed = ParseEmbeddingsRequest(R"({"model":"m","input":[1212,318,257]})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    ASSERT_EQ(parsed.request.inputs.size(), 1U);
    EXPECT_TRUE(parsed.request.inputs[0].is_tokens);
    EXPECT_EQ(parsed.request.inputs[0].tokens, (std::vector<std::int64_t>{1212, 318, 257}));
    EXPECT_EQ(parsed.request.prompt_tokens, 3);

    parsed = ParseEmbeddingsRequest(R"({"model":"m","input":[[1,2,3],[4,5]],"dimensions":4,)"
                                    R"("encoding_format":"base64"})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_EQ(parsed.request.inputs.size(), 2U);
    EXPECT_EQ(parsed.request.token_count, 5);
    EXPECT_EQ(parsed.request.prompt_tokens, 5);
    EXPECT_EQ(parsed.request.dimensions, 4);
    EXPECT_TRUE(parsed.request.base64);

    // null means "the default", as for the API's other optional parameters.
    parsed = ParseEmbeddingsRequest(
        R"({"model":"m","input":"x","encoding_format":null,"dimensions":null,"user":"u"})");
    ASSERT_EQ(parsed.status, 0) << parsed.error_body;
    EXPECT_EQ(parsed.request.prompt_tokens, 1);  // At least 1.
}

TEST(ParseEmbeddingsRequest, RejectsInvalidBodiesWithOpenAiEnvelopes) {
    const auto unparsable = ParseEmbeddingsRequest("{\"model\":");
    EXPECT_EQ(unparsable.status, 400);
    EXPECT_TRUE(ErrorOf(unparsable.error_body)
                    .at("message")
                    .as_string()
                    .starts_with("We could not parse the JSON body of your request."));
    EXPECT_EQ(ErrorOf(ParseEmbeddingsRequest("[]").error_body).at("message"),
              "Invalid body: expected a JSON object, but got an array.");
    EXPECT_EQ(ErrorOf(ParseEmbeddingsRequest(R"({"input":"x"})").error_body).at("message"),
              "you must provide a model parameter");
    const auto model_type =
        ErrorOf(ParseEmbeddingsRequest(R"({"model":1,"input":"x"})").error_body);
    EXPECT_EQ(model_type.at("param"), "model");
    EXPECT_EQ(model_type.at("code"), "invalid_type");

    const auto missing = ErrorOf(ParseEmbeddingsRequest(R"({"model":"m"})").error_body);
    EXPECT_EQ(missing.at("message"), "Missing required parameter: 'input'.");
    EXPECT_EQ(missing.at("param"), "input");
    EXPECT_EQ(missing.at("code"), "missing_required_parameter");

    for (const char* input : {R"("")", "[]", "{}", "1", "null", "true", R"(["a",1])", R"([1,"a"])",
                              R"([1,2.5])", R"([[1],"a"])", R"([[1],[]])", R"([[1],[2.0]])",
                              R"(["a",""])", R"([{"text":"a"}])", "[[]]", "[null]"}) {
        const auto parsed =
            ParseEmbeddingsRequest(std::string(R"({"model":"m","input":)") + input + "}");
        EXPECT_EQ(parsed.status, 400) << input;
        const auto error = ErrorOf(parsed.error_body);
        EXPECT_TRUE(error.at("message").as_string().starts_with("'$.input' is invalid.")) << input;
        EXPECT_EQ(error.at("type"), "invalid_request_error");
        EXPECT_TRUE(error.at("param").is_null());
        EXPECT_TRUE(error.at("code").is_null());
    }
    std::string many = R"({"model":"m","input":[)";
    for (std::size_t i = 0; i <= kMaxInputs; ++i) many += i == 0 ? "\"a\"" : ",\"a\"";
    EXPECT_EQ(ParseEmbeddingsRequest(many + "]}").status, 400);

    const auto format = ErrorOf(
        ParseEmbeddingsRequest(R"({"model":"m","input":"x","encoding_format":"int8"})").error_body);
    EXPECT_EQ(format.at("message"),
              "Invalid value: 'int8'. Supported values are: 'float' and 'base64'.");
    EXPECT_EQ(format.at("param"), "encoding_format");
    EXPECT_EQ(format.at("code"), "invalid_value");
    EXPECT_EQ(
        ErrorOf(
            ParseEmbeddingsRequest(R"({"model":"m","input":"x","encoding_format":1})").error_body)
            .at("code"),
        "invalid_type");

    const auto zero =
        ErrorOf(ParseEmbeddingsRequest(R"({"model":"m","input":"x","dimensions":0})").error_body);
    EXPECT_EQ(zero.at("param"), "dimensions");
    EXPECT_EQ(zero.at("code"), "integer_below_min_value");
    EXPECT_EQ(
        ErrorOf(ParseEmbeddingsRequest(R"({"model":"m","input":"x","dimensions":-3})").error_body)
            .at("code"),
        "integer_below_min_value");
    EXPECT_EQ(
        ErrorOf(ParseEmbeddingsRequest(R"({"model":"m","input":"x","dimensions":4.5})").error_body)
            .at("code"),
        "invalid_type");
    EXPECT_EQ(
        ErrorOf(ParseEmbeddingsRequest(R"({"model":"m","input":"x","dimensions":"8"})").error_body)
            .at("code"),
        "invalid_type");
    EXPECT_EQ(
        ErrorOf(ParseEmbeddingsRequest(R"({"model":"m","input":"x","dimensions":4097})").error_body)
            .at("code"),
        "integer_above_max_value");
    EXPECT_EQ(ParseEmbeddingsRequest(R"({"model":"m","input":"x","dimensions":4096})").status, 0);
}

TEST(EmbeddingVector, DeterministicUnitVectorsThatDifferByInput) {
    const Input a{false, "hello", {}};
    const Input b{false, "hello!", {}};
    const auto first = EmbeddingVector(a, 8);
    ASSERT_EQ(first.size(), 8U);
    EXPECT_EQ(first, EmbeddingVector(a, 8));
    EXPECT_NE(first, EmbeddingVector(b, 8));
    EXPECT_NEAR(Length(first), 1.0, 1e-6);
    for (const int dimensions : {1, 2, 3, 1536, 4096}) {
        const auto vector = EmbeddingVector(b, dimensions);
        EXPECT_EQ(vector.size(), static_cast<std::size_t>(dimensions));
        EXPECT_NEAR(Length(vector), 1.0, 1e-5) << dimensions;
    }
    // Tokens and text never collide, nor do token arrays that differ.
    const Input tokens{true, {}, {1, 2, 3}};
    EXPECT_NE(EmbeddingVector(tokens, 8), EmbeddingVector(Input{true, {}, {1, 2, 4}}, 8));
    EXPECT_NE(EmbeddingVector(tokens, 8), EmbeddingVector(Input{false, "", {}}, 8));
    EXPECT_NEAR(Length(EmbeddingVector(tokens, 8)), 1.0, 1e-6);
}

TEST(AppendBase64, Rfc4648Vectors) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [in, expected] : cases) {
        std::string out;
        AppendBase64(out, in);
        EXPECT_EQ(out, expected) << in;
    }
    std::string out;
    AppendBase64(out, std::string_view("\xff\x00\x80", 3));
    EXPECT_EQ(out, "/wCA");
}

TEST(AppendEmbeddingList, FloatAnswer) {
    const auto parsed = ParseEmbeddingsRequest(R"({"model":"m\"x","input":["abcd","efgh"]})");
    ASSERT_EQ(parsed.status, 0);
    std::string body;
    AppendEmbeddingList(body, parsed.request);
    const json::value answer = json::parse(body);
    EXPECT_TRUE(body.starts_with(R"({"object":"list","data":[{"object":"embedding","index":0,)"
                                 R"("embedding":[)"))
        << body;
    EXPECT_TRUE(body.ends_with(R"(],"model":"m\"x","usage":{"prompt_tokens":2,"total_tokens":2}})"))
        << body;
    const auto& data = answer.at("data").as_array();
    ASSERT_EQ(data.size(), 2U);
    for (std::size_t i = 0; i < data.size(); ++i) {
        EXPECT_EQ(data[i].at("index").as_int64(), static_cast<std::int64_t>(i));
        const auto& values = data[i].at("embedding").as_array();
        ASSERT_EQ(values.size(), 8U);
        // Every printed number reads back as the float the vector holds.
        const auto vector = EmbeddingVector(parsed.request.inputs[i], 8);
        for (std::size_t j = 0; j < values.size(); ++j) {
            const double printed = values[j].is_double()
                                       ? values[j].as_double()
                                       : static_cast<double>(values[j].as_int64());
            EXPECT_EQ(static_cast<float>(printed), vector[j]);
        }
    }
}

TEST(AppendEmbeddingList, Base64IsTheLittleEndianFloat32Array) {
    const auto parsed = ParseEmbeddingsRequest(
        R"({"model":"m","input":[[1,2,3],[4,5]],"encoding_format":"base64","dimensions":5})");
    ASSERT_EQ(parsed.status, 0);
    std::string body;
    AppendEmbeddingList(body, parsed.request);
    const json::value answer = json::parse(body);
    const auto& data = answer.at("data").as_array();
    ASSERT_EQ(data.size(), 2U);
    for (std::size_t i = 0; i < data.size(); ++i) {
        const std::string bytes(DecodeBase64(data[i].at("embedding").as_string()));
        ASSERT_EQ(bytes.size(), 5U * 4);
        const auto vector = EmbeddingVector(parsed.request.inputs[i], 5);
        for (std::size_t j = 0; j < 5; ++j) {
            std::uint32_t bits = 0;
            for (int b = 3; b >= 0; --b) {
                bits = (bits << 8) |
                       static_cast<unsigned char>(bytes[j * 4 + static_cast<std::size_t>(b)]);
            }
            EXPECT_EQ(std::bit_cast<float>(bits), vector[j]);
        }
    }
    EXPECT_EQ(answer.at("usage").at("prompt_tokens"), 5);
    EXPECT_EQ(answer.at("usage").at("total_tokens"), 5);
}

}  // namespace
}  // namespace switchyard::mock::embeddings
