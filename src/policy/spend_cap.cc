#include "policy/spend_cap.h"

namespace switchyard::policy {

std::chrono::system_clock::time_point SpendCapResetAfter(
    std::chrono::system_clock::time_point now) {
    using namespace std::chrono;
    const year_month_day today{floor<days>(now)};
    const year_month_day first_of_next =
        year_month_day{today.year() / today.month() / 1} + months{1};
    return sys_days{first_of_next};
}

}  // namespace switchyard::policy
