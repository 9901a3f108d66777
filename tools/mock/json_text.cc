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

}  // namespace switchyard::mock
