#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard::core {

// Names that end up in response headers, log lines and URL paths (model groups, deployments,
// models, client keys, lanes): 1 to kMaxNameLength visible ASCII characters, without `"` or `\`.
// No CR/LF can reach a header through them, and every one survives a URL path unescaped.
inline constexpr std::size_t kMaxNameLength = 256;
bool IsSafeName(std::string_view name);

// A region name (a deployment's `region`, a residency constraint): 1 to 32 lowercase ASCII
// letters, digits and `-`, e.g. `eu`, `us-east`.
bool IsRegionName(std::string_view name);

// `text` with every byte outside visible ASCII (and `"`, `\`) written as %XX, so a path or name
// from the wire can be echoed in a JSON body or a log line as valid UTF-8.
std::string Printable(std::string_view text);

// Percent-decodes a URL path segment. `ok` is false (and the result empty) on a malformed escape.
std::string PercentDecode(std::string_view text, bool& ok);

}  // namespace switchyard::core
