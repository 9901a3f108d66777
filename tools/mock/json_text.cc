#include "json_text.h"

#include <algorithm>
#include <boost/json/serializer.hpp>

namespace switchyard::mock {

void AppendJsonString(std::string& out, std::string_view text) {
    boost::json::serializer serializer;
    serializer.reset(boost::json::string_view(text.data(), text.size()));
    // Plain ASCII grows by the two quotes only; escapes take further rounds of the loop.
    std::size_t room = text.size() + 2;
    while (!serializer.done()) {
        const std::size_t old_size = out.size();
        out.resize(old_size + std::max<std::size_t>(room, 16));
        const auto written = serializer.read(out.data() + old_size, out.size() - old_size);
        out.resize(old_size + written.size());
        room = 64;
    }
}

void AppendJsonStringContent(std::string& out, std::string_view text) {
    const std::size_t start = out.size();
    AppendJsonString(out, text);
    out.pop_back();
    out.erase(start, 1);
}

std::string_view JsonKindName(boost::json::kind kind) {
    switch (kind) {
        case boost::json::kind::null:
            return "null";
        case boost::json::kind::bool_:
            return "a boolean";
        case boost::json::kind::int64:
        case boost::json::kind::uint64:
            return "an integer";
        case boost::json::kind::double_:
            return "a number";
        case boost::json::kind::string:
            return "a string";
        case boost::json::kind::array:
            return "an array";
        case boost::json::kind::object:
            return "an object";
    }
    return "a value";
}

boost::json::parse_options DeepJsonDocuments() {
    boost::json::parse_options options;
    options.max_depth = 256;
    return options;
}

}  // namespace switchyard::mock
