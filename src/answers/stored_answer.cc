#include "answers/stored_answer.h"

#include <boost/beast/core/string.hpp>
#include <charconv>

namespace switchyard::answers {

// "<status> <stream 0|1> <header bytes>\n" + headers + body.
std::string Encode(const StoredAnswer& answer) {
    std::string out = std::to_string(answer.status);
    out += answer.stream ? " 1 " : " 0 ";
    out += std::to_string(answer.headers.size());
    out += '\n';
    out.reserve(out.size() + answer.Bytes());
    out += answer.headers;
    out += answer.body;
    return out;
}

namespace {

// RFC 9110 section 5.6.2: a header name is a token.
bool IsTokenChar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Whether `headers` is header lines as Encode's caller keeps them: each "Name: value\r\n" with a
// token for a name, a value without control characters but tab (RFC 9110 section 5.5), and no
// framing header — nothing a store could use to split or reframe a response.
bool AreHeaderLines(std::string_view headers) {
    while (!headers.empty()) {
        const std::size_t end = headers.find("\r\n");
        if (end == std::string_view::npos) return false;
        const std::string_view line = headers.substr(0, end);
        headers.remove_prefix(end + 2);
        const std::size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos) return false;
        const std::string_view name = line.substr(0, colon);
        for (const char c : name) {
            if (!IsTokenChar(c)) return false;
        }
        if (IsFramingHeader(name)) return false;
        for (const char c : line.substr(colon + 1)) {
            const auto byte = static_cast<unsigned char>(c);
            if ((byte < 0x20 && c != '\t') || byte == 0x7f) return false;
        }
    }
    return true;
}

}  // namespace

std::optional<StoredAnswer> Decode(std::string_view text) {
    const std::size_t line_end = text.find('\n');
    if (line_end == std::string_view::npos) return std::nullopt;
    const std::string_view line = text.substr(0, line_end);
    StoredAnswer answer;
    const char* p = line.data();
    const char* end = line.data() + line.size();
    auto [after_status, status_ec] = std::from_chars(p, end, answer.status);
    if (status_ec != std::errc() || after_status + 3 > end || after_status[0] != ' ' ||
        (after_status[1] != '0' && after_status[1] != '1') || after_status[2] != ' ') {
        return std::nullopt;
    }
    answer.stream = after_status[1] == '1';
    std::size_t header_bytes = 0;
    auto [after_size, size_ec] = std::from_chars(after_status + 3, end, header_bytes);
    if (size_ec != std::errc() || after_size != end) return std::nullopt;
    const std::string_view rest = text.substr(line_end + 1);
    // A final status only: an interim one would leave the real answer's place open.
    if (header_bytes > rest.size() || answer.status < 200 || answer.status > 599) {
        return std::nullopt;
    }
    if (!AreHeaderLines(rest.substr(0, header_bytes))) return std::nullopt;
    answer.headers = rest.substr(0, header_bytes);
    answer.body = rest.substr(header_bytes);
    return answer;
}

bool IsFramingHeader(std::string_view name) {
    using boost::beast::iequals;
    return iequals(name, "server") || iequals(name, "content-length") ||
           iequals(name, "connection") || iequals(name, "transfer-encoding");
}

void AnswerCapture::Whole(unsigned status, std::string_view headers, std::string_view body) {
    if (started) return;  // one answer per request: the first write is it
    started = true;
    if (headers.size() + body.size() > limit) {
        overflow = true;
        return;
    }
    answer.status = status;
    answer.headers = headers;
    answer.body = body;
    answer.stream = false;
    complete = true;
}

void AnswerCapture::StreamHead(unsigned status, std::string headers) {
    if (started) return;
    started = true;
    answer.status = status;
    answer.headers = std::move(headers);
    answer.stream = true;
    overflow = answer.headers.size() > limit;
}

void AnswerCapture::StreamBytes(std::string_view bytes) {
    if (!started || overflow || complete) return;
    if (answer.Bytes() + bytes.size() > limit) {
        overflow = true;
        answer.body.clear();
        answer.body.shrink_to_fit();
        return;
    }
    answer.body.append(bytes);
}

}  // namespace switchyard::answers
