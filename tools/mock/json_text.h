#pragma once

#include <string>
#include <string_view>

namespace switchyard::mock {

// Appends `text` to `out` as a quoted, escaped JSON string. Used where a body is assembled from a
// fixed template directly into a reused buffer instead of through a boost::json::value.
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace switchyard::mock
