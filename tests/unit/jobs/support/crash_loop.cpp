// SPDX-License-Identifier: GPL-2.0-only
// The in-memory crash loop (crash_loop.h).
#include "tests/unit/jobs/support/crash_loop.h"

#include <chrono>
#include <limits>
#include <map>

#include "check/fs_check.h"
#include "check/qgroup_verify.h"
#include "lib/io/fault_device.h"
#include "tests/unit/jobs/support/fixture.h"

namespace fsctl::testing {

namespace {

/// Records the transid of every commit and, when asked, a copy of the image
/// right after it (cheap: pages are shared copy-on-write).
class CommitRecorder final : public fs::CommitObserver {
 public:
  explicit CommitRecorder(std::shared_ptr<io::MemoryImage> image = nullptr) : image_(std::move(image)) {}
  void on_commit(const fs::CommitRecord& r) override {
    transids.push_back(r.transid);
    if (image_) states.emplace(r.transid, *image_);
  }
  std::vector<u64> transids;
  std::map<u64, io::MemoryImage> states;  // by transid

 private:
  std::shared_ptr<io::MemoryImage> image_;
};

}  // namespace

/// Opens `image` read-only and checks it: every tree walked and verified,
/// no fsck error, qgroups exact when asked; returns its dumps.
Result<Checked> open_and_check(const std::shared_ptr<io::MemoryImage>& image, DumpMode mode, bool qgroups_exact) {
  FSCTL_TRY_ASSIGN(auto fs, open_memory_fs(image, false));
  FSCTL_TRY_ASSIGN(auto fsck, check::check_filesystem(*fs));
  if (fsck.errors()) {
    std::string first;
    for (auto& p : fsck.problems)
      if (p.error) {
        first = p.message;
        break;
      }
    return make_error(Errc::corrupt, "check_filesystem: " + std::to_string(fsck.errors()) + " errors, first: " + first);
  }
  if (qgroups_exact) {
    FSCTL_TRY_ASSIGN(auto qv, check::verify_qgroups(*fs));
    if (qv && !qv->ok()) return make_error(Errc::corrupt, "qgroup verify: " + std::to_string(qv->mismatches) + " mismatches");
  }
  Checked c;
  FSCTL_TRY_ASSIGN(c.exact, dump_trees(*fs, DumpMode::exact));
  if (mode == DumpMode::exact) {
    c.result = c.exact;
  } else {
    FSCTL_TRY_ASSIGN(c.result, dump_trees(*fs, mode));
  }
  return c;
}

Status run_job(const std::shared_ptr<io::MemoryImage>& image, const Job& job, io::DeviceWrapper wrap,
               fs::CommitObserver* observer, u64 cache_bytes) {
  FSCTL_TRY_ASSIGN(auto fs, open_memory_fs(image, true, std::move(wrap), observer, cache_bytes));
  return job(*fs);
}

bool has_quota(const std::shared_ptr<io::MemoryImage>& image) {
  auto fs = open_memory_fs(image, false);
  return fs && (*fs)->find_root(format::QUOTA_TREE_OBJECTID).has_value();
}

CrashReport crash_at_every_write(const std::shared_ptr<const io::MemoryImage>& base, const Job& job, const CrashOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  CrashReport rep;
  auto fail = [&](u64 n, const std::string& what) {
    if (rep.failures.size() < o.max_failures) rep.failures.push_back("N=" + std::to_string(n) + ": " + what);
  };
  auto finish = [&] {
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  };
  const bool quota = has_quota(std::make_shared<io::MemoryImage>(*base));

  // The uninterrupted run: its write requests, commits and states.
  auto ref_image = std::make_shared<io::MemoryImage>(*base);
  auto start = open_and_check(ref_image, DumpMode::exact, false);
  if (!start) {
    fail(0, "the base image: " + start.error().message);
    return finish();
  }
  const u64 base_gen = start->exact.generation;
  auto counter = std::make_shared<io::FaultBudget>(std::numeric_limits<u64>::max());
  CommitRecorder ref(ref_image);
  if (auto st = run_job(ref_image, job, io::fault_wrapper(counter), &ref, o.cache_bytes); !st) {
    fail(0, "the uninterrupted run: " + st.error().message);
    return finish();
  }
  rep.writes = counter->writes();
  rep.commits = ref.transids.size();
  auto final_state = open_and_check(ref_image, o.result_mode, quota);
  if (!final_state) {
    fail(0, "the uninterrupted run's result: " + final_state.error().message);
    return finish();
  }
  std::map<u64, TreeDump> state_dumps{{base_gen, start->exact}};  // by generation, filled as needed
  auto state_dump = [&](u64 gen) -> Result<TreeDump> {
    if (auto it = state_dumps.find(gen); it != state_dumps.end()) return it->second;
    auto img = std::make_shared<io::MemoryImage>(ref.states.at(gen));
    FSCTL_TRY_ASSIGN(auto c, open_and_check(img, DumpMode::exact, false));
    state_dumps[gen] = c.exact;
    return c.exact;
  };

  for (u64 n = 1; n <= rep.writes; ++n) {
    auto image = std::make_shared<io::MemoryImage>(*base);
    auto budget = std::make_shared<io::FaultBudget>(n);
    CommitRecorder rec;
    Status st = run_job(image, job, io::fault_wrapper(budget), &rec, o.cache_bytes);
    if (st) {
      fail(n, "the job succeeded although the device stopped after write " + std::to_string(n));
      continue;
    }
    if (!budget->tripped() || st.error().code != Errc::io || st.error().message.find("fail point") == std::string::npos) {
      fail(n, "the job stopped with another error than the fail point's: " + st.error().message);
      continue;
    }
    // Commits that completed must be the uninterrupted run's first ones.
    std::size_t k = rec.transids.size();
    if (k > ref.transids.size() || !std::equal(rec.transids.begin(), rec.transids.end(), ref.transids.begin())) {
      fail(n, "the crashed run committed other transids than the uninterrupted run");
      continue;
    }
    const u64 old_gen = k == 0 ? base_gen : ref.transids[k - 1];
    const u64 new_gen = k < ref.transids.size() ? ref.transids[k] : old_gen;
    auto crashed = open_and_check(image, DumpMode::exact, o.qgroups_exact_when_crashed);
    if (!crashed) {
      fail(n, "the surviving bytes: " + crashed.error().message);
      continue;
    }
    const u64 gen = crashed->exact.generation;
    if (gen != old_gen && gen != new_gen) {
      fail(n, "opens at generation " + std::to_string(gen) + ", expect " + std::to_string(old_gen) + " or " + std::to_string(new_gen));
      continue;
    }
    (gen == old_gen ? rep.old_states : rep.new_states)++;
    auto want = state_dump(gen);
    if (!want) {
      fail(n, "the uninterrupted run's state at generation " + std::to_string(gen) + ": " + want.error().message);
      continue;
    }
    if (!(crashed->exact == *want)) {
      fail(n, "the state at generation " + std::to_string(gen) + " differs from the uninterrupted run's:\n" +
                  describe_difference(crashed->exact, *want));
      continue;
    }
    // Rerun the same job from there: it completes, and ends where the
    // uninterrupted run ended.
    if (auto r = run_job(image, job, {}, nullptr, o.cache_bytes); !r) {
      fail(n, "the rerun failed: " + r.error().message);
      continue;
    }
    auto rerun = open_and_check(image, o.result_mode, quota);
    if (!rerun) {
      fail(n, "after the rerun: " + rerun.error().message);
      continue;
    }
    if (!(rerun->result == final_state->result))
      fail(n, "the rerun's result differs from the uninterrupted run's:\n" + describe_difference(rerun->result, final_state->result));
  }
  return finish();
}

}  // namespace fsctl::testing
