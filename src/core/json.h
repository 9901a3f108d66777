#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <string_view>

namespace switchyard::core {

// The deepest JSON nesting Switchyard reads anywhere — client requests (both APIs, scanned or
// parsed), upstream answers and stream events, translation, config params — so a document is
// accepted or refused the same way on every path. A client's deeper request is a 400.
inline constexpr std::size_t kMaxJsonDepth = 128;

// boost::json::parse with kMaxJsonDepth; never throws: failures set `ec`.
inline boost::json::value ParseJson(std::string_view text, boost::system::error_code& ec,
                                    boost::json::storage_ptr storage = {}) {
    boost::json::parse_options options;
    options.max_depth = kMaxJsonDepth;
    return boost::json::parse(text, ec, std::move(storage), options);
}

// Whether `text` is one well-formed JSON object within kMaxJsonDepth — checked without building a
// document (no allocation), for an upstream answer that is passed on as it came.
bool IsJsonObject(std::string_view text);

}  // namespace switchyard::core
