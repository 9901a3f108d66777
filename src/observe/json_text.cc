#include "observe/json_text.h"

#include <array>

namespace switchyard::observe {
namespace {

// Which bytes must be escaped inside a JSON string (RFC 8259: '"', '\\' and controls).
constexpr auto kEscaped = [] {
    std::array<bool, 256> table{};
    for (int c = 0; c < 0x20; ++c) table[c] = true;
    table['"'] = true;
    table['\\'] = true;
    return table;
}();

void Put(fmt::memory_buffer& out, std::string_view text) { out.append(text); }
void Put(std::string& out, std::string_view text) { out.append(text); }

template <class Out>
void AppendEscaped(Out& out, char c) {
    switch (c) {
        case '"':
            Put(out, std::string_view("\\\""));
            return;
        case '\\':
            Put(out, std::string_view("\\\\"));
            return;
        case '\n':
            Put(out, std::string_view("\\n"));
            return;
        case '\r':
            Put(out, std::string_view("\\r"));
            return;
        case '\t':
            Put(out, std::string_view("\\t"));
            return;
        default: {
            static constexpr char kHex[] = "0123456789abcdef";
            const auto byte = static_cast<unsigned char>(c);
            const char escaped[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xf]};
            Put(out, std::string_view(escaped, sizeof escaped));
        }
    }
}

template <class Out>
void AppendQuoted(Out& out, std::string_view text) {
    out.push_back('"');
    // Runs of plain bytes are copied at once: names, paths and ids rarely need escaping.
    const char* p = text.data();
    const char* const end = p + text.size();
    while (p != end) {
        const char* const run = p;
        while (p != end && !kEscaped[static_cast<unsigned char>(*p)]) ++p;
        Put(out, std::string_view(run, static_cast<std::size_t>(p - run)));
        if (p == end) break;
        AppendEscaped(out, *p++);
    }
    out.push_back('"');
}

}  // namespace

void AppendJsonString(fmt::memory_buffer& out, std::string_view text) { AppendQuoted(out, text); }
void AppendJsonString(std::string& out, std::string_view text) { AppendQuoted(out, text); }

}  // namespace switchyard::observe
