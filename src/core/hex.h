#pragma once

namespace switchyard::core {

// The value of one hexadecimal digit, either case; -1 for any other byte.
constexpr int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace switchyard::core
