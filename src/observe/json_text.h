#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace switchyard::observe {

// Appends `text` as a JSON string (RFC 8259 escaping) without an intermediate string: for the
// JSON that observe writes by hand on hot paths (access log lines, trace exports).
void AppendJsonString(fmt::memory_buffer& out, std::string_view text);
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace switchyard::observe
