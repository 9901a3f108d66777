#include "answers/request_key.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <vector>

#include "core/json.h"
#include "core/sha256.h"

namespace switchyard::answers {
namespace {

// Fields of a request that say who asks or how to file it, not what to answer.
constexpr std::string_view kIgnoredFields[] = {"user", "metadata"};

void AppendCanonical(const boost::json::value& value, std::string& out, bool top) {
    switch (value.kind()) {
        case boost::json::kind::object: {
            const boost::json::object& object = value.get_object();
            std::vector<const boost::json::key_value_pair*> members;
            members.reserve(object.size());
            for (const auto& member : object) {
                if (top && std::find(std::begin(kIgnoredFields), std::end(kIgnoredFields),
                                     member.key()) != std::end(kIgnoredFields)) {
                    continue;
                }
                members.push_back(&member);
            }
            std::sort(members.begin(), members.end(),
                      [](const auto* a, const auto* b) { return a->key() < b->key(); });
            out += '{';
            for (std::size_t i = 0; i < members.size(); ++i) {
                if (i > 0) out += ',';
                out += boost::json::serialize(boost::json::string(members[i]->key()));
                out += ':';
                AppendCanonical(members[i]->value(), out, false);
            }
            out += '}';
            return;
        }
        case boost::json::kind::array: {
            out += '[';
            bool first = true;
            for (const auto& element : value.get_array()) {
                if (!first) out += ',';
                first = false;
                AppendCanonical(element, out, false);
            }
            out += ']';
            return;
        }
        case boost::json::kind::int64:
            out += std::to_string(value.get_int64());  // exact: 2^53 + 1 is not 2^53
            return;
        case boost::json::kind::uint64:
            out += std::to_string(value.get_uint64());
            return;
        case boost::json::kind::double_: {
            // 1, 1.0 and 1e0 are one number: an integral double within int64 is written as the
            // integer it is exactly (ParseJson leaves no NaN or infinity).
            const double number = value.get_double();
            if (number >= -9.2e18 && number <= 9.2e18 && number == std::trunc(number)) {
                out += std::to_string(static_cast<long long>(number));
            } else {
                out += boost::json::serialize(boost::json::value(number));
            }
            return;
        }
        default:
            out += boost::json::serialize(value);
    }
}

}  // namespace

std::string Fingerprint(std::string_view route, std::string_view body) {
    std::string text(route);
    text += '\n';
    text += body;
    return core::Sha256Hex(text);
}

std::optional<std::string> CanonicalJson(std::string_view body) {
    boost::system::error_code ec;
    const boost::json::value value = core::ParseJson(body, ec);
    if (ec) return std::nullopt;
    std::string out;
    out.reserve(body.size());
    AppendCanonical(value, out, true);
    return out;
}

std::optional<std::string> CacheKey(std::string_view group, std::string_view route,
                                    std::string_view scope, std::string_view body) {
    // One parse: the canonical form of an object is the only one that starts with '{'.
    std::optional<std::string> canonical = CanonicalJson(body);
    if (!canonical || !canonical->starts_with('{')) return std::nullopt;
    std::string text;
    text.reserve(group.size() + route.size() + scope.size() + canonical->size() + 3);
    text.append(group).append(1, '\0').append(route).append(1, '\0').append(scope).append(1, '\0');
    text += *canonical;
    return core::Sha256Hex(text);
}

}  // namespace switchyard::answers
