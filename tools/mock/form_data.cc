#include "form_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace switchyard::mock {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr std::size_t kMaxBoundary = 70;  // RFC 2046 5.1.1

std::string_view Trim(std::string_view text) {
    constexpr std::string_view kBlank = " \t";
    const auto first = text.find_first_not_of(kBlank);
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) ==
               std::tolower(static_cast<unsigned char>(y));
    });
}

int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// `%XX` escapes decoded (a malformed escape is kept as it is); with `plus_is_blank`, `+` too.
std::string PercentDecode(std::string_view text, bool plus_is_blank) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '%' && i + 2 < text.size()) {
            const int high = HexDigit(text[i + 1]);
            const int low = HexDigit(text[i + 2]);
            if (high >= 0 && low >= 0) {
                out.push_back(static_cast<char>(high * 16 + low));
                i += 2;
                continue;
            }
        }
        out.push_back(plus_is_blank && c == '+' ? ' ' : c);
    }
    return out;
}

// The `key=value` parameters after the first `;` of a header value such as
// `form-data; name="file"; filename="a;b.jsonl"`: keys lowercased, quoted values unquoted (a
// backslash escapes the next character). Returns the value before the first `;`.
std::string_view HeaderParameters(std::string_view value,
                                  std::vector<std::pair<std::string, std::string>>& parameters) {
    const auto semicolon = value.find(';');
    const std::string_view head = Trim(value.substr(0, semicolon));
    std::size_t i = semicolon == std::string_view::npos ? value.size() : semicolon + 1;
    while (i < value.size()) {
        while (i < value.size() && (value[i] == ' ' || value[i] == '\t' || value[i] == ';')) ++i;
        const auto equals = value.find('=', i);
        if (equals == std::string_view::npos) break;
        std::string key(Trim(value.substr(i, equals - i)));
        std::transform(key.begin(), key.end(), key.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        i = equals + 1;
        while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
        std::string parameter;
        if (i < value.size() && value[i] == '"') {
            for (++i; i < value.size() && value[i] != '"'; ++i) {
                if (value[i] == '\\' && i + 1 < value.size()) ++i;
                parameter.push_back(value[i]);
            }
            if (i < value.size()) ++i;  // The closing quote.
            const auto next = value.find(';', i);
            i = next == std::string_view::npos ? value.size() : next;
        } else {
            const auto next = value.find(';', i);
            const auto end = next == std::string_view::npos ? value.size() : next;
            parameter = Trim(value.substr(i, end - i));
            i = end;
        }
        parameters.emplace_back(std::move(key), std::move(parameter));
    }
    return head;
}

const std::string* FindParameter(const std::vector<std::pair<std::string, std::string>>& parameters,
                                 std::string_view key) {
    for (const auto& [name, value] : parameters) {
        if (name == key) return &value;
    }
    return nullptr;
}

// Fills `part` from the header block of one part (lines separated by CRLF). Returns an error
// message or "".
std::string ReadPartHeaders(std::string_view headers, FormPart& part) {
    bool has_disposition = false;
    while (!headers.empty()) {
        const auto end = headers.find(kCrlf);
        const std::string_view line = headers.substr(0, end);
        headers = end == std::string_view::npos ? std::string_view{} : headers.substr(end + 2);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            return fmt::format("malformed part header '{}'", line);
        }
        const std::string_view name = Trim(line.substr(0, colon));
        const std::string_view value = Trim(line.substr(colon + 1));
        if (EqualsIgnoringCase(name, "content-type")) {
            part.content_type = value;
        } else if (EqualsIgnoringCase(name, "content-disposition")) {
            std::vector<std::pair<std::string, std::string>> parameters;
            if (!EqualsIgnoringCase(HeaderParameters(value, parameters), "form-data")) {
                return fmt::format("a part's Content-Disposition is '{}', not form-data", value);
            }
            const std::string* field = FindParameter(parameters, "name");
            if (field == nullptr) return "a part's Content-Disposition has no name";
            part.name = *field;
            if (const std::string* filename = FindParameter(parameters, "filename")) {
                part.filename = *filename;
            } else if (const std::string* extended = FindParameter(parameters, "filename*")) {
                // RFC 5987: charset'language'percent-encoded-name.
                const auto quote = extended->find('\'', extended->find('\'') + 1);
                part.filename = PercentDecode(
                    quote == std::string::npos ? *extended : extended->substr(quote + 1), false);
            }
            has_disposition = true;
        }
    }
    if (!has_disposition) return "a part has no Content-Disposition header";
    return {};
}

}  // namespace

const FormPart* ParsedForm::Find(std::string_view name) const {
    for (const FormPart& part : parts) {
        if (part.name == name) return &part;
    }
    return nullptr;
}

ParsedForm ParseMultipart(std::string_view content_type, std::string_view body) {
    ParsedForm result;
    std::vector<std::pair<std::string, std::string>> parameters;
    if (!EqualsIgnoringCase(HeaderParameters(content_type, parameters), "multipart/form-data")) {
        result.error = "the body must be multipart/form-data";
        return result;
    }
    const std::string* boundary = FindParameter(parameters, "boundary");
    if (boundary == nullptr || boundary->empty() || boundary->size() > kMaxBoundary) {
        result.error = "multipart/form-data needs a boundary of 1 to 70 characters";
        return result;
    }
    const std::string delimiter = "--" + *boundary;
    const std::string next_delimiter = "\r\n" + delimiter;

    std::size_t pos = 0;
    if (!body.starts_with(delimiter)) {
        pos = body.find(next_delimiter);  // After a preamble.
        if (pos == std::string_view::npos) {
            result.error = "the body has no boundary line";
            return result;
        }
        pos += kCrlf.size();
    }
    for (;;) {
        pos += delimiter.size();
        if (body.substr(pos).starts_with("--")) return result;  // The closing delimiter.
        while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
        if (!body.substr(pos).starts_with(kCrlf)) {
            result.error = "a boundary line is not followed by CRLF";
            return result;
        }
        pos += kCrlf.size();
        std::size_t data_start = 0;
        std::string_view headers;
        if (body.substr(pos).starts_with(kCrlf)) {
            data_start = pos + kCrlf.size();
        } else {
            const auto headers_end = body.find("\r\n\r\n", pos);
            if (headers_end == std::string_view::npos) {
                result.error = "a part's headers are not ended by an empty line";
                return result;
            }
            headers = body.substr(pos, headers_end - pos);
            data_start = headers_end + 4;
        }
        const auto data_end = body.find(next_delimiter, data_start);
        if (data_end == std::string_view::npos) {
            result.error = "the body ends before its closing boundary";
            return result;
        }
        FormPart& part = result.parts.emplace_back();
        if (std::string error = ReadPartHeaders(headers, part); !error.empty()) {
            result.error = std::move(error);
            return result;
        }
        part.data = body.substr(data_start, data_end - data_start);
        pos = data_end + kCrlf.size();
    }
}

std::optional<std::string> QueryParameter(std::string_view target, std::string_view name) {
    const auto question = target.find('?');
    if (question == std::string_view::npos) return std::nullopt;
    std::string_view query = target.substr(question + 1);
    while (!query.empty()) {
        const auto ampersand = query.find('&');
        const std::string_view pair = query.substr(0, ampersand);
        query =
            ampersand == std::string_view::npos ? std::string_view{} : query.substr(ampersand + 1);
        const auto equals = pair.find('=');
        if (PercentDecode(pair.substr(0, equals), true) != name) continue;
        if (equals == std::string_view::npos) return std::string();
        return PercentDecode(pair.substr(equals + 1), true);
    }
    return std::nullopt;
}

}  // namespace switchyard::mock
