#include "api/multipart.h"

#include <boost/beast/core/string.hpp>

namespace switchyard::api {
namespace {

std::string_view Trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The value of parameter `name` in a header value's `; name=value` list (quotes removed).
std::optional<std::string> Parameter(std::string_view header, std::string_view name) {
    std::size_t at = header.find(';');
    while (at != std::string_view::npos) {
        header.remove_prefix(at + 1);
        const std::size_t equals = header.find('=');
        if (equals == std::string_view::npos) return std::nullopt;
        const std::string_view key = Trim(header.substr(0, equals));
        std::string_view rest = header.substr(equals + 1);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        std::string value;
        std::size_t consumed = 0;
        if (!rest.empty() && rest.front() == '"') {
            std::size_t i = 1;
            for (; i < rest.size() && rest[i] != '"'; ++i) {
                if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
                value.push_back(rest[i]);
            }
            consumed = std::min(i + 1, rest.size());
        } else {
            const std::size_t end = rest.find(';');
            value = std::string(Trim(rest.substr(0, end)));
            consumed = end == std::string_view::npos ? rest.size() : end;
        }
        if (boost::beast::iequals(key, name)) return value;
        header = rest.substr(consumed);
        at = header.find(';');
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::vector<FormPart>> ParseMultipart(std::string_view content_type,
                                                    std::string_view body, std::string& error) {
    const std::string_view media = Trim(content_type.substr(0, content_type.find(';')));
    if (!boost::beast::iequals(media, "multipart/form-data")) {
        error = "the body must be multipart/form-data";
        return std::nullopt;
    }
    const std::optional<std::string> boundary = Parameter(content_type, "boundary");
    if (!boundary || boundary->empty() || boundary->size() > 200) {
        error = "the Content-Type names no multipart boundary";
        return std::nullopt;
    }
    const std::string delimiter = "--" + *boundary;
    std::size_t at = body.find(delimiter);
    if (at == std::string_view::npos) {
        error = "the body holds no multipart boundary";
        return std::nullopt;
    }
    std::vector<FormPart> parts;
    for (;;) {
        at += delimiter.size();
        if (body.substr(at, 2) == "--") return parts;  // the closing delimiter
        // Transport padding, then the line end.
        while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
        if (body.substr(at, 2) != "\r\n") break;
        at += 2;
        FormPart part;
        bool disposition = false;
        for (;;) {
            const std::size_t end = body.find("\r\n", at);
            if (end == std::string_view::npos) {
                error = "a multipart part's headers do not end";
                return std::nullopt;
            }
            const std::string_view line = body.substr(at, end - at);
            at = end + 2;
            if (line.empty()) break;
            const std::size_t colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            const std::string_view name = Trim(line.substr(0, colon));
            const std::string_view value = Trim(line.substr(colon + 1));
            if (boost::beast::iequals(name, "content-disposition")) {
                disposition = true;
                part.name = Parameter(value, "name").value_or("");
                part.filename = Parameter(value, "filename");
            } else if (boost::beast::iequals(name, "content-type")) {
                part.content_type = value;
            }
        }
        const std::size_t next = body.find("\r\n" + delimiter, at);
        if (next == std::string_view::npos) {
            error = "a multipart part does not end with the boundary";
            return std::nullopt;
        }
        part.data = body.substr(at, next - at);
        if (!disposition || part.name.empty()) {
            error = "a multipart part has no Content-Disposition name";
            return std::nullopt;
        }
        parts.push_back(std::move(part));
        at = next + 2;
    }
    error = "the multipart body is malformed";
    return std::nullopt;
}

}  // namespace switchyard::api
