#include "core/json.h"

#include <boost/json/basic_parser_impl.hpp>

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

}  // namespace

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
