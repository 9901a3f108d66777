#include "core/json.h"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/string.hpp>
#include <cmath>
#include <string>
#include <vector>

namespace switchyard::core {
namespace {

// A handler that accepts every event: the parser alone checks the grammar and the depth.
struct Validator {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    bool object_seen = false;
    std::size_t depth = 0;

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&) {
        if (depth++ == 0) object_seen = true;
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code&) {
        --depth;
        return true;
    }
    bool on_array_begin(boost::system::error_code&) {
        ++depth;
        return true;
    }
    bool on_array_end(std::size_t, boost::system::error_code&) {
        --depth;
        return true;
    }
    bool on_key_part(std::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_key(std::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_string_part(std::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_string(std::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t, std::string_view, boost::system::error_code&) { return true; }
    bool on_uint64(std::uint64_t, std::string_view, boost::system::error_code&) { return true; }
    bool on_double(double, std::string_view, boost::system::error_code&) { return true; }
    bool on_bool(bool, boost::system::error_code&) { return true; }
    bool on_null(boost::system::error_code&) { return true; }
    bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
    bool on_comment(std::string_view, boost::system::error_code&) { return true; }
};

// The Validator, also noting the kinds of the top-level members a shape check asks for.
struct ShapeReader : Validator {
    std::span<const std::string_view> names;
    ObjectShape shape;
    std::string key;   // the top-level key being read (parts may come in pieces)
    int pending = -1;  // the index in `names` of the member whose value comes next

    void Note(JsonKind kind) {
        if (depth == 1 && pending >= 0) shape.members[static_cast<std::size_t>(pending)] = kind;
        if (depth == 1) pending = -1;
    }
    bool on_object_begin(boost::system::error_code& ec) {
        Note(JsonKind::kObject);
        return Validator::on_object_begin(ec);
    }
    bool on_array_begin(boost::system::error_code& ec) {
        Note(JsonKind::kArray);
        return Validator::on_array_begin(ec);
    }
    bool on_key_part(std::string_view part, std::size_t, boost::system::error_code&) {
        if (depth == 1 && key.size() < 64) key.append(part);
        return true;
    }
    bool on_key(std::string_view part, std::size_t, boost::system::error_code&) {
        if (depth != 1) return true;
        if (key.size() < 64) key.append(part);
        pending = -1;
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (names[i] == key) pending = static_cast<int>(i);
        }
        key.clear();
        return true;
    }
    bool on_string_part(std::string_view, std::size_t, boost::system::error_code&) {
        Note(JsonKind::kString);
        return true;
    }
    bool on_string(std::string_view, std::size_t, boost::system::error_code&) {
        Note(JsonKind::kString);
        return true;
    }
    bool on_number_part(std::string_view, boost::system::error_code&) {
        Note(JsonKind::kNumber);
        return true;
    }
    bool on_int64(std::int64_t, std::string_view, boost::system::error_code&) {
        Note(JsonKind::kNumber);
        return true;
    }
    bool on_uint64(std::uint64_t, std::string_view, boost::system::error_code&) {
        Note(JsonKind::kNumber);
        return true;
    }
    bool on_double(double, std::string_view, boost::system::error_code&) {
        Note(JsonKind::kNumber);
        return true;
    }
    bool on_bool(bool, boost::system::error_code&) {
        Note(JsonKind::kBool);
        return true;
    }
    bool on_null(boost::system::error_code&) {
        Note(JsonKind::kNull);
        return true;
    }
};

}  // namespace

ObjectShape ReadObjectShape(std::string_view text, std::span<const std::string_view> names) {
    boost::json::parse_options options;
    options.max_depth = kMaxJsonDepth;
    boost::json::basic_parser<ShapeReader> parser(options);
    parser.handler().names = names.first(std::min(names.size(), kMaxShapeNames));
    boost::system::error_code ec;
    const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
    if (ec || used != text.size() || !parser.handler().object_seen || !parser.done()) return {};
    ObjectShape shape = parser.handler().shape;
    shape.object = true;
    return shape;
}

namespace {

// Whether `text` may hold a number beyond a double: one with an exponent (an 'e' or 'E' after a
// digit or '.', and before a digit or sign), or a run of more digits than the largest double has
// before its point (309), which the parser reads as infinity too. Cheap next to a parse; rare in
// anything but numbers.
bool MayOverflowDouble(std::string_view text) {
    constexpr std::size_t kLongestFiniteRun = 308;
    std::size_t run = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        run = c >= '0' && c <= '9' ? run + 1 : 0;
        if (run > kLongestFiniteRun) return true;
        if ((c | 0x20) != 'e' || i == 0 || i + 1 == text.size()) continue;
        const char before = text[i - 1];
        const char after = text[i + 1];
        if (((before >= '0' && before <= '9') || before == '.') &&
            ((after >= '0' && after <= '9') || after == '+' || after == '-')) {
            return true;
        }
    }
    return false;
}

// Makes every double of `value` finite (see ParseJson); false when one cannot be.
bool MakeNumbersFinite(boost::json::value& value) {
    std::vector<boost::json::value*> pending{&value};
    while (!pending.empty()) {
        boost::json::value* v = pending.back();
        pending.pop_back();
        if (v->is_double()) {
            const double d = v->get_double();
            if (std::isnan(d)) {
                v->emplace_double() = 0.0;
            } else if (std::isinf(d)) {
                return false;
            }
        } else if (v->is_array()) {
            for (boost::json::value& element : v->get_array()) pending.push_back(&element);
        } else if (v->is_object()) {
            for (auto& member : v->get_object()) pending.push_back(&member.value());
        }
    }
    return true;
}

}  // namespace

boost::json::value ParseJson(std::string_view text, boost::system::error_code& ec,
                             boost::json::storage_ptr storage) {
    boost::json::parse_options options;
    options.max_depth = kMaxJsonDepth;
    boost::json::value value = boost::json::parse(text, ec, std::move(storage), options);
    if (!ec && MayOverflowDouble(text) && !MakeNumbersFinite(value)) {
        ec = boost::json::error::exponent_overflow;
        return {};
    }
    return value;
}

void AppendJson(std::string& out, const boost::json::value& value) {
    boost::json::serializer serializer;
    serializer.reset(&value);
    while (!serializer.done()) {
        const std::size_t used = out.size();
        out.resize(used + std::max<std::size_t>(4096, used / 2));
        const std::string_view written = serializer.read(out.data() + used, out.size() - used);
        out.resize(used + written.size());
    }
}

std::string SerializeEdited(const boost::json::object& object, std::span<const MemberEdit> edits) {
    std::string out;
    out.reserve(256);
    out += '{';
    bool first = true;
    auto member = [&](std::string_view key, const boost::json::value& value) {
        if (!first) out += ',';
        first = false;
        AppendJson(out, boost::json::string(key));
        out += ':';
        AppendJson(out, value);
    };
    // The last edit of a key is the one that counts.
    auto last = [&](std::string_view key) {
        const auto it = std::find_if(edits.rbegin(), edits.rend(),
                                     [&](const MemberEdit& e) { return e.key == key; });
        return it == edits.rend() ? nullptr : &*it;
    };
    for (const auto& kv : object) {
        const MemberEdit* edit = last(kv.key());
        if (edit == nullptr) {
            member(kv.key(), kv.value());
        } else if (edit->value != nullptr) {
            member(kv.key(), *edit->value);
        }
    }
    for (const MemberEdit& edit : edits) {
        if (edit.value != nullptr && last(edit.key) == &edit && !object.contains(edit.key)) {
            member(edit.key, *edit.value);
        }
    }
    out += '}';
    return out;
}

bool IsJsonObject(std::string_view text) {
    boost::json::parse_options options;
    options.max_depth = kMaxJsonDepth;
    boost::json::basic_parser<Validator> parser(options);
    boost::system::error_code ec;
    const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
    if (ec || used != text.size()) return false;
    // A scalar document never opened an object; `depth` is back to 0 at a complete document.
    return parser.handler().object_seen && parser.done();
}

}  // namespace switchyard::core
