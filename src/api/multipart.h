#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::api {

// One part of a multipart/form-data body (RFC 7578): a form field or a file. Views into the body.
struct FormPart {
    std::string name;
    std::optional<std::string> filename;  // set for a file
    std::string_view content_type;
    std::string_view data;
};

// The parts of a multipart/form-data body whose Content-Type header is `content_type`; nullopt,
// with `error` saying what is wrong, for a body that is not one.
std::optional<std::vector<FormPart>> ParseMultipart(std::string_view content_type,
                                                    std::string_view body, std::string& error);

}  // namespace switchyard::api
