// What Switchyard reads of an upstream's 2xx body before it relays, translates or keeps it, checked
// against a parsed document: the one-pass shape of its top-level members (core::ReadObjectShape)
// and the verdict on whether it is an answer of its API (api::ShapeOfAnswer), for each API; and
// a rewrite of its members (core::SerializeEdited) that must parse back to the same document with
// the edit applied. Numbers must come back as JSON (ParseJson leaves no NaN or infinity).
#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/answer_shape.h"
#include "core/json.h"

using namespace switchyard;

namespace {

core::JsonKind KindOf(const boost::json::value& v) {
    switch (v.kind()) {
        case boost::json::kind::null:
            return core::JsonKind::kNull;
        case boost::json::kind::bool_:
            return core::JsonKind::kBool;
        case boost::json::kind::int64:
        case boost::json::kind::uint64:
        case boost::json::kind::double_:
            return core::JsonKind::kNumber;
        case boost::json::kind::string:
            return core::JsonKind::kString;
        case boost::json::kind::array:
            return core::JsonKind::kArray;
        case boost::json::kind::object:
            return core::JsonKind::kObject;
    }
    return core::JsonKind::kAbsent;
}

bool Finite(const boost::json::value& v) {
    if (v.is_double()) return std::isfinite(v.get_double());
    if (v.is_array()) {
        for (const auto& e : v.get_array())
            if (!Finite(e)) return false;
    }
    if (v.is_object()) {
        for (const auto& m : v.get_object())
            if (!Finite(m.value())) return false;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    constexpr std::string_view kNames[] = {"choices", "error", "content", "output"};
    const core::ObjectShape shape = core::ReadObjectShape(text, kNames);
    boost::system::error_code ec;
    const boost::json::value doc = core::ParseJson(text, ec);
    // ParseJson refuses what ReadObjectShape may accept only for numbers beyond a double.
    const bool object = !ec && doc.is_object();
    if (object && !shape.object) std::abort();
    if (!object) {
        if (shape.object && ec != boost::json::error::exponent_overflow) std::abort();
        return 0;
    }
    if (!Finite(doc)) std::abort();
    const boost::json::object& o = doc.get_object();
    for (std::size_t i = 0; i < 4; ++i) {
        const boost::json::value* member = o.if_contains(kNames[i]);
        const core::JsonKind want = member == nullptr ? core::JsonKind::kAbsent : KindOf(*member);
        // A repeated key: the document keeps the last, and so does the shape.
        if (shape.members[i] != want) std::abort();
    }
    for (const api::Wire wire :
         {api::Wire::kOpenAi, api::Wire::kAnthropic, api::Wire::kResponses}) {
        const std::string_view content = wire == api::Wire::kAnthropic   ? "content"
                                         : wire == api::Wire::kResponses ? "output"
                                                                         : "choices";
        const boost::json::value* error = o.if_contains("error");
        const boost::json::value* body = o.if_contains(content);
        const api::AnswerShape want =
            error != nullptr && !error->is_null()  ? api::AnswerShape::kError
            : body == nullptr || !body->is_array() ? api::AnswerShape::kWrongShape
                                                   : api::AnswerShape::kAnswer;
        if (api::ShapeOfAnswer(text, wire, api::Endpoint::kChat) != want) std::abort();
    }
    // A rewrite of the model and a removal parse back as the same edit of the document.
    const boost::json::value model("m");
    const core::MemberEdit edits[] = {{"model", &model}, {"error", nullptr}};
    boost::json::object expected = o;
    expected["model"] = "m";
    expected.erase("error");
    // Both sides pass through text once: the parser's reading of a long number is not exact.
    const boost::json::value rewritten = core::ParseJson(core::SerializeEdited(o, edits), ec);
    if (ec) std::abort();
    const boost::json::value want =
        core::ParseJson(boost::json::serialize(boost::json::value(expected)), ec);
    if (ec || rewritten != want) std::abort();
    return 0;
}
