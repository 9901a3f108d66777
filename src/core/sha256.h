#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard::core {

// The SHA-256 of `data` as 64 lowercase hex digits. Client keys are stored only in this form.
std::string Sha256Hex(std::string_view data);

// A fresh client key: "sk-sy-" followed by 48 hex digits from the OpenSSL random generator.
std::string NewClientKey();

// `bytes` bytes from the system's cryptographic random source, as lowercase hex.
std::string RandomHex(std::size_t bytes);

}  // namespace switchyard::core
