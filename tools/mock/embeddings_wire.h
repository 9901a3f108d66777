#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// Bodies of OpenAI's Embeddings API (POST /v1/embeddings) as the mock provider sends them: request
// parsing and the `list` of deterministic embeddings. No I/O. Error bodies are OpenAI's envelopes
// (openai::ErrorEnvelope); faults and rate limits use openai_wire's bodies.
namespace switchyard::mock::embeddings {

// Vector length when the request sets no `dimensions`.
inline constexpr int kDefaultDimensions = 8;
// The mock's ceiling for `dimensions` (the largest OpenAI model has 3072), so that an answer
// stays a sane size: at most kMaxInputs x kMaxDimensions floats.
inline constexpr int kMaxDimensions = 4096;
// The API's limit on the number of items in an `input` array.
inline constexpr std::size_t kMaxInputs = 2048;

// One item of `input`: a text, or an array of token ids.
struct Input final {
    bool is_tokens = false;
    std::string text;
    std::vector<std::int64_t> tokens;
};

// The fields of an embeddings request the mock acts on.
struct EmbeddingsRequest final {
    std::string model;
    std::vector<Input> inputs;  // One per embedding in the answer, in order; never empty.
    int dimensions = kDefaultDimensions;
    bool base64 = false;           // encoding_format "base64".
    std::int64_t text_chars = 0;   // Characters of all string inputs.
    std::int64_t token_count = 0;  // Integer tokens of all token inputs.
    // usage.prompt_tokens: text_chars / 4 + token_count, at least 1.
    int prompt_tokens = 1;
};

// Result of ParseEmbeddingsRequest: `status` is 0 on success, otherwise the status and OpenAI error
// envelope to answer with.
struct ParsedEmbeddingsRequest final {
    EmbeddingsRequest request;
    int status = 0;
    std::string error_body;
};

// Validates a request body: a JSON object with a string `model`; `input` a non-empty string, a
// non-empty array of non-empty strings, a non-empty array of integers or a non-empty array of
// non-empty arrays of integers (at most kMaxInputs items); `encoding_format` absent, null, "float"
// or "base64"; `dimensions` absent, null or an integer in [1, kMaxDimensions].
ParsedEmbeddingsRequest ParseEmbeddingsRequest(std::string_view body);

// The embedding of `input`: `dimensions` floats of Euclidean length 1, a pure function of the
// input's text (or tokens) and `dimensions`. A text and a token array never share a vector.
std::vector<float> EmbeddingVector(const Input& input, int dimensions);

// Appends standard base64 (RFC 4648, with padding) of `bytes`.
void AppendBase64(std::string& out, std::string_view bytes);

// Appends the answer: `{"object":"list","data":[{"object":"embedding","index":i,"embedding":...}
// ...],"model":...,"usage":{"prompt_tokens":P,"total_tokens":P}}`. Each embedding is an array of
// floats (shortest form that reads back as the same float32), or with `base64` a string holding
// the base64 of the little-endian float32 array.
void AppendEmbeddingList(std::string& out, const EmbeddingsRequest& request);

}  // namespace switchyard::mock::embeddings
