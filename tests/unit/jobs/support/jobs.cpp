// SPDX-License-Identifier: GPL-2.0-only
// Adapter from the crash tests to the jobs' entry points (jobs.h).
#include "tests/unit/jobs/support/jobs.h"

#include "check/qgroup_verify.h"
#include "convert/bg_tree.h"
#include "lib/base/assert.h"
#include "lib/qgroup/repair.h"
#include "lib/qgroup/quota_disable.h"
#include "lib/qgroup/quota_enable.h"
#include "lib/relocation/balance.h"
#include "lib/rescue/balance_cancel.h"

namespace fsctl::testing {

namespace {

qgroup::RepairOptions repair_options(const StopRequest* stop) {
  qgroup::RepairOptions o;
  o.stop = stop;
  return o;
}

Job unstoppable(StoppableJob job) {
  return [job = std::move(job)](fs::FsInfo& fs) -> Status {
    FSCTL_TRY(job(fs, nullptr));
    return {};
  };
}

}  // namespace

StoppableJob convert_stoppable(bool to_bg_tree, u64 batch) {
  return [=](fs::FsInfo& fs, const StopRequest* stop) -> Result<bool> {
    convert::ConvertOptions o;
    o.direction = to_bg_tree ? convert::Direction::to_bg_tree : convert::Direction::to_extent_tree;
    o.batch = batch;
    o.stop = stop;
    FSCTL_TRY_ASSIGN(auto r, convert::convert_bg_tree(fs, o));
    return r.interrupted;
  };
}

Job convert_job(bool to_bg_tree, u64 batch) { return unstoppable(convert_stoppable(to_bg_tree, batch)); }

StoppableJob balance_stoppable(const std::string& filters, u64 batch, bool force) {
  auto parsed = relocation::BalanceFilters::parse(filters);
  FSCTL_ASSERT(parsed.has_value());
  relocation::BalanceFilters f = *parsed;
  return [=](fs::FsInfo& fs, const StopRequest* stop) -> Result<bool> {
    relocation::BalanceOptions o;
    o.metadata = f;
    o.system = f;
    o.batch = batch;
    o.force = force;
    o.stop = stop;
    FSCTL_TRY_ASSIGN(auto r, relocation::balance_metadata(fs, o));
    return r.interrupted;
  };
}

Job balance_job(const std::string& filters, u64 batch, bool force) { return unstoppable(balance_stoppable(filters, batch, force)); }

StoppableJob repair_stoppable() {
  return [](fs::FsInfo& fs, const StopRequest* stop) -> Result<bool> {
    FSCTL_TRY_ASSIGN(auto report, check::verify_qgroups(fs));
    if (!report) return make_error(Errc::not_found, "quota is not enabled");
    FSCTL_TRY_ASSIGN(auto r, qgroup::repair_qgroups(fs, report->quota, report->computed, repair_options(stop)));
    return r.interrupted;
  };
}

Job repair_job() { return unstoppable(repair_stoppable()); }

Job quota_disable_job() {
  return [](fs::FsInfo& fs) -> Status {
    FSCTL_TRY(qgroup::disable_quota(fs, {}));
    return {};
  };
}

Job quota_enable_job() {
  return [](fs::FsInfo& fs) -> Status {
    FSCTL_TRY(qgroup::enable_quota(fs, {}));
    return {};
  };
}

Job balance_cancel_job() {
  return [](fs::FsInfo& fs) -> Status {
    FSCTL_TRY(rescue::cancel_balance(fs, {}));
    return {};
  };
}

}  // namespace fsctl::testing
