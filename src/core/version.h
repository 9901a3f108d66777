#pragma once

namespace switchyard {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace switchyard
