#include "embeddings_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cmath>

#include "json_text.h"
#include "openai_wire.h"

namespace switchyard::mock::embeddings {
namespace json = boost::json;
namespace {

// OpenAI's answer to an `input` that is none of the accepted forms (seen in public reports, with
// param and code null).
constexpr std::string_view kInvalidInput =
    "'$.input' is invalid. Please check the API reference: "
    "https://platform.openai.com/docs/api-reference.";

ParsedEmbeddingsRequest Invalid(std::string body) {
    ParsedEmbeddingsRequest result;
    result.status = 400;
    result.error_body = std::move(body);
    return result;
}

std::string InvalidInput() { return openai::ErrorEnvelope(kInvalidInput, "invalid_request_error"); }

bool IsInteger(const json::value& value) { return value.is_int64() || value.is_uint64(); }

// A JSON integer as a token id (ids above INT64_MAX keep their bits).
std::int64_t TokenOf(const json::value& value) {
    return value.is_int64() ? value.get_int64() : static_cast<std::int64_t>(value.get_uint64());
}

// Reads `tokens`, a non-empty array of integers, into `input`. False if it is not one.
bool ReadTokens(const json::array& tokens, Input& input) {
    if (tokens.empty()) return false;
    input.is_tokens = true;
    input.tokens.reserve(tokens.size());
    for (const auto& token : tokens) {
        if (!IsInteger(token)) return false;
        input.tokens.push_back(TokenOf(token));
    }
    return true;
}

// Reads `input` into `inputs`: one of the four accepted forms. False if it is none of them.
bool ReadInputs(const json::value& input, std::vector<Input>& inputs) {
    if (const auto* text = input.if_string()) {
        if (text->empty()) return false;
        inputs.push_back({false, std::string(text->data(), text->size()), {}});
        return true;
    }
    const auto* items = input.if_array();
    if (items == nullptr || items->empty() || items->size() > kMaxInputs) return false;
    const json::value& first = items->front();
    if (IsInteger(first)) {  // One token array.
        inputs.emplace_back();
        return ReadTokens(*items, inputs.back());
    }
    inputs.reserve(items->size());
    for (const auto& item : *items) {
        inputs.emplace_back();
        if (first.is_string()) {
            const auto* text = item.if_string();
            if (text == nullptr || text->empty()) return false;
            inputs.back().text.assign(text->data(), text->size());
        } else {
            const auto* tokens = item.if_array();
            if (tokens == nullptr || !ReadTokens(*tokens, inputs.back())) return false;
        }
    }
    return true;
}

// FNV-1a, 64 bits.
std::uint64_t Fnv1a(std::uint64_t hash, const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

// SplitMix64's output function: spreads consecutive seeds over all 64 bits.
std::uint64_t SplitMix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void AppendFloat(std::string& out, float value) {
    // {} gives the shortest text that reads back as the same float ("0.35355338", "-1e-05").
    fmt::format_to(std::back_inserter(out), "{}", value);
}

}  // namespace

ParsedEmbeddingsRequest ParseEmbeddingsRequest(std::string_view body) {
    unsigned char scratch[4096];
    json::monotonic_resource resource(scratch, sizeof scratch);
    boost::system::error_code ec;
    const json::value root = json::parse(json::string_view(body.data(), body.size()), ec,
                                         json::storage_ptr(&resource), DeepJsonDocuments());
    if (ec) return Invalid(openai::UnparsableJsonBody());
    const auto* object = root.if_object();
    if (object == nullptr) return Invalid(openai::NotAnObjectBody(root.kind()));

    ParsedEmbeddingsRequest result;
    EmbeddingsRequest& request = result.request;
    const auto model = object->find("model");
    if (model == object->end()) {
        return Invalid(
            openai::ErrorEnvelope("you must provide a model parameter", "invalid_request_error"));
    }
    const auto* model_name = model->value().if_string();
    if (model_name == nullptr) {
        return Invalid(openai::InvalidTypeBody("model", "a string", model->value().kind()));
    }
    request.model.assign(model_name->data(), model_name->size());

    const auto input = object->find("input");
    if (input == object->end()) return Invalid(openai::MissingParameterBody("input"));
    if (!ReadInputs(input->value(), request.inputs)) return Invalid(InvalidInput());

    if (const auto format = object->find("encoding_format");
        format != object->end() && !format->value().is_null()) {
        const auto* name = format->value().if_string();
        if (name == nullptr) {
            return Invalid(
                openai::InvalidTypeBody("encoding_format", "a string", format->value().kind()));
        }
        if (*name != "float" && *name != "base64") {
            return Invalid(openai::InvalidValueBody("encoding_format",
                                                    std::string_view(name->data(), name->size()),
                                                    "'float' and 'base64'"));
        }
        request.base64 = *name == "base64";
    }

    if (const auto dimensions = object->find("dimensions");
        dimensions != object->end() && !dimensions->value().is_null()) {
        const json::value& value = dimensions->value();
        if (!IsInteger(value)) {
            return Invalid(openai::InvalidTypeBody("dimensions", "an integer", value.kind()));
        }
        if (value.is_int64() && value.get_int64() < 1) {
            return Invalid(openai::ErrorEnvelope(
                fmt::format("Invalid 'dimensions': integer below minimum value. Expected a value "
                            ">= 1, but got {} instead.",
                            value.get_int64()),
                "invalid_request_error", "dimensions", "integer_below_min_value"));
        }
        if (value.is_uint64() || value.get_int64() > kMaxDimensions) {
            return Invalid(openai::ErrorEnvelope(
                fmt::format("Invalid 'dimensions': integer above maximum value. Expected a value "
                            "<= {}, but got {} instead.",
                            kMaxDimensions, json::serialize(value)),
                "invalid_request_error", "dimensions", "integer_above_max_value"));
        }
        request.dimensions = static_cast<int>(value.get_int64());
    }

    for (const Input& item : request.inputs) {
        if (item.is_tokens) {
            request.token_count += static_cast<std::int64_t>(item.tokens.size());
        } else {
            request.text_chars += static_cast<std::int64_t>(item.text.size());
        }
    }
    request.prompt_tokens = static_cast<int>(
        std::clamp<std::int64_t>(request.text_chars / 4 + request.token_count, 1, 1 << 30));
    return result;
}

std::vector<float> EmbeddingVector(const Input& input, int dimensions) {
    // The seed hashes the kind of input and its content: a text's bytes, or the tokens as 8
    // little-endian bytes each.
    std::uint64_t seed = 0xcbf29ce484222325ULL;
    const char kind = input.is_tokens ? 'k' : 't';
    seed = Fnv1a(seed, &kind, 1);
    if (input.is_tokens) {
        for (const std::int64_t token : input.tokens) {
            std::array<unsigned char, 8> bytes{};
            auto bits = static_cast<std::uint64_t>(token);
            for (auto& byte : bytes) {
                byte = static_cast<unsigned char>(bits & 0xff);
                bits >>= 8;
            }
            seed = Fnv1a(seed, bytes.data(), bytes.size());
        }
    } else {
        seed = Fnv1a(seed, input.text.data(), input.text.size());
    }

    const auto size = static_cast<std::size_t>(std::max(dimensions, 1));
    std::vector<double> raw(size);
    double norm = 0;
    for (std::size_t i = 0; i < size; ++i) {
        // 53 random bits as a double in [-1, 1).
        const std::uint64_t bits = SplitMix64(seed + i * 0x9e3779b97f4a7c15ULL);
        raw[i] = static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
        norm += raw[i] * raw[i];
    }
    std::vector<float> vector(size);
    if (norm == 0) {  // Not reachable in practice; keeps the length-1 promise regardless.
        vector[0] = 1.0F;
        return vector;
    }
    norm = std::sqrt(norm);
    for (std::size_t i = 0; i < size; ++i) vector[i] = static_cast<float>(raw[i] / norm);
    return vector;
}

void AppendBase64(std::string& out, std::string_view bytes) {
    constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const auto triple =
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
        out += kAlphabet[(triple >> 18) & 63];
        out += kAlphabet[(triple >> 12) & 63];
        out += kAlphabet[(triple >> 6) & 63];
        out += kAlphabet[triple & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest == 0) return;
    std::uint32_t triple = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2)
        triple |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(triple >> 18) & 63];
    out += kAlphabet[(triple >> 12) & 63];
    out += rest == 2 ? kAlphabet[(triple >> 6) & 63] : '=';
    out += '=';
}

void AppendEmbeddingList(std::string& out, const EmbeddingsRequest& request) {
    out += R"({"object":"list","data":[)";
    std::string bytes;
    for (std::size_t index = 0; index < request.inputs.size(); ++index) {
        if (index > 0) out += ',';
        fmt::format_to(std::back_inserter(out), R"({{"object":"embedding","index":{},"embedding":)",
                       index);
        const std::vector<float> vector =
            EmbeddingVector(request.inputs[index], request.dimensions);
        if (request.base64) {
            bytes.clear();
            for (const float value : vector) {
                auto bits = std::bit_cast<std::uint32_t>(value);
                for (int b = 0; b < 4; ++b) {
                    bytes += static_cast<char>(bits & 0xff);
                    bits >>= 8;
                }
            }
            out += '"';
            AppendBase64(out, bytes);
            out += '"';
        } else {
            out += '[';
            for (std::size_t i = 0; i < vector.size(); ++i) {
                if (i > 0) out += ',';
                AppendFloat(out, vector[i]);
            }
            out += ']';
        }
        out += '}';
    }
    out += R"(],"model":)";
    AppendJsonString(out, request.model);
    fmt::format_to(std::back_inserter(out),
                   R"(,"usage":{{"prompt_tokens":{},"total_tokens":{}}}}})", request.prompt_tokens,
                   request.prompt_tokens);
}

}  // namespace switchyard::mock::embeddings
