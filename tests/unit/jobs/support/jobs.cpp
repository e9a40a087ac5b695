// SPDX-License-Identifier: GPL-2.0-only
// Adapter from the crash tests to the jobs' entry points (jobs.h).
#include "tests/unit/jobs/support/jobs.h"

#include "check/qgroup_verify.h"
#include "convert/bg_tree.h"
#include "lib/base/assert.h"
#include "lib/qgroup/repair.h"
#include "lib/relocation/balance.h"

namespace fsctl::testing {

Job convert_job(bool to_bg_tree, u64 batch) {
  return [=](fs::FsInfo& fs) -> Status {
    convert::ConvertOptions o;
    o.direction = to_bg_tree ? convert::Direction::to_bg_tree : convert::Direction::to_extent_tree;
    o.batch = batch;
    FSCTL_TRY(convert::convert_bg_tree(fs, o));
    return {};
  };
}

Job balance_job(const std::string& filters, u64 batch, bool force) {
  auto parsed = relocation::BalanceFilters::parse(filters);
  FSCTL_ASSERT(parsed.has_value());
  relocation::BalanceFilters f = *parsed;
  return [=](fs::FsInfo& fs) -> Status {
    relocation::BalanceOptions o;
    o.metadata = f;
    o.system = f;
    o.batch = batch;
    o.force = force;
    FSCTL_TRY(relocation::balance_metadata(fs, o));
    return {};
  };
}

Job repair_job() {
  return [](fs::FsInfo& fs) -> Status {
    FSCTL_TRY_ASSIGN(auto report, check::verify_qgroups(fs));
    if (!report) return make_error(Errc::not_found, "quota is not enabled");
    FSCTL_TRY(qgroup::repair_qgroups(fs, report->quota, report->computed));
    return {};
  };
}

}  // namespace fsctl::testing
