// The downstream request reader as the session configures it (header and body limits, the
// per-request arena), and what the session then derives from a request: the printable path.
// Never a crash; a parsed path is always printable.
#include <array>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory_resource>

#include "core/arena_allocator.h"
#include "core/names.h"

namespace http = boost::beast::http;
using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::array<std::byte, 1024> arena_buffer;
    std::pmr::monotonic_buffer_resource arena(arena_buffer.data(), arena_buffer.size());
    using Allocator = core::ArenaAllocator<char>;
    http::request_parser<http::string_body, Allocator> parser(
        std::piecewise_construct, std::make_tuple(), std::make_tuple(Allocator(&arena)));
    parser.body_limit(64 * 1024);
    parser.header_limit(16 * 1024);
    parser.eager(true);
    // As the session's reader feeds it: everything received so far, again after each step that
    // consumed bytes. need_more means "wait for more bytes", and there are none here.
    boost::system::error_code ec;
    std::size_t offset = 0;
    while (offset < size && !parser.is_done()) {
        const std::size_t used = parser.put(boost::asio::buffer(data + offset, size - offset), ec);
        offset += used;
        if (ec || used == 0) break;
    }
    if (parser.is_header_done()) {
        const std::string_view target = parser.get().target();
        const std::string path = core::Printable(target.substr(0, target.find('?')));
        for (const char c : path) {
            if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
                std::abort();
            }
        }
        (void)parser.get().keep_alive();
        (void)parser.get()[http::field::expect];
    }
    return 0;
}
