#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The request forms of the Batch APIs: multipart/form-data bodies (file uploads, RFC 7578) and
// query strings. Pure: no I/O.
namespace switchyard::mock {

// One part of a multipart/form-data body: a form field, or a file when it has a filename. The
// views point into the body.
struct FormPart final {
    std::string name;
    std::optional<std::string> filename;
    std::string_view content_type;  // empty when the part has no Content-Type header
    std::string_view data;
};

// Result of ParseMultipart: `error` is empty on success.
struct ParsedForm final {
    std::vector<FormPart> parts;
    std::string error;

    bool ok() const { return error.empty(); }

    // The first part named `name`, or nullptr.
    const FormPart* Find(std::string_view name) const;
};

// Splits `body`, sent with the Content-Type header value `content_type`, into its parts. The
// boundary comes from the header (`multipart/form-data; boundary=X`, quoted or not); parts are
// delimited by CRLF `--X` lines, as RFC 2046 has it, and each needs a Content-Disposition of
// form-data with a name. A preamble before the first delimiter and an epilogue after the closing
// one are ignored.
ParsedForm ParseMultipart(std::string_view content_type, std::string_view body);

// The value of query parameter `name` in `target` ("/path?a=1&b=x%20y"), percent-decoded with `+`
// as a blank; nullopt when absent.
std::optional<std::string> QueryParameter(std::string_view target, std::string_view name);

}  // namespace switchyard::mock
