#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "api/openai_chat.h"
#include "core/error.h"

namespace switchyard::api {

// A whole response body of API `from` in API `to`: success bodies and error envelopes. `created`
// is the Unix time a translated chat.completion carries. An error envelope always translates; a
// success body the client's API cannot express is a kUpstreamProtocol error, never a silent loss.
// `request` is the client's request, which a Responses answer echoes (null: an empty one).
std::variant<std::string, core::LocalError> TranslateWholeAnswer(
    std::string_view body, unsigned status, Wire from, Wire to, std::int64_t created,
    const boost::json::object* request = nullptr);

}  // namespace switchyard::api
