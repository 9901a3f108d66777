#include "core/names.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/hex.h"

namespace switchyard::core {
namespace {

bool Plain(unsigned char c) { return c > 0x20 && c < 0x7f && c != '"' && c != '\\'; }

}  // namespace

bool IsSafeName(std::string_view name) {
    if (name.empty() || name.size() > kMaxNameLength) return false;
    for (const char c : name) {
        if (!Plain(static_cast<unsigned char>(c))) return false;
    }
    return true;
}

std::string Printable(std::string_view text) {
    // Usually nothing to encode: one scan, one copy.
    if (std::all_of(text.begin(), text.end(),
                    [](char c) { return Plain(static_cast<unsigned char>(c)); })) {
        return std::string(text);
    }
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (Plain(byte)) {
            out.push_back(c);
        } else {
            fmt::format_to(std::back_inserter(out), "%{:02X}", byte);
        }
    }
    return out;
}

std::string PercentDecode(std::string_view text, bool& ok) {
    std::string out;
    out.reserve(text.size());
    ok = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) {
            ok = false;
            return {};
        }
        const int high = HexValue(text[i + 1]);
        const int low = HexValue(text[i + 2]);
        if (high < 0 || low < 0) {
            ok = false;
            return {};
        }
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    return out;
}

bool IsRegionName(std::string_view name) {
    if (name.empty() || name.size() > 32) return false;
    for (const char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    return true;
}

}  // namespace switchyard::core
