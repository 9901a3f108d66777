#pragma once

#include <string_view>

namespace switchyard::observe {

// The live dashboard (GET /dashboard): one self-contained HTML page, built into the binary from
// src/observe/dashboard/dashboard.html. It loads nothing from elsewhere; its data comes from
// /status and /metrics with the master key the operator enters.
std::string_view DashboardPage();

}  // namespace switchyard::observe
