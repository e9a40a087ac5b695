// SPDX-License-Identifier: GPL-2.0-only
// Fail point after the N-th write request (crash consistency tests,
// DESIGN.md invariant 3): a shared write budget and the decorator that
// spends it.
#include "lib/io/fault_device.h"

#include <algorithm>
#include <cerrno>

#include "lib/base/assert.h"

namespace fsctl::io {

FaultBudget::FaultBudget(u64 writes_allowed) : allowed_(writes_allowed) { FSCTL_ASSERT(writes_allowed > 0); }

bool FaultBudget::take_write() { return taken_.fetch_add(1) < allowed_; }

u64 FaultBudget::writes() const { return std::min(taken_.load(), allowed_); }

u64 FaultBudget::dropped() const {
  u64 t = taken_.load();
  return t > allowed_ ? t - allowed_ : 0;
}

std::string FaultBudget::describe() const {
  return "fail point: the device stopped after write request " + std::to_string(allowed_) + " (FaultDevice budget)";
}

namespace {
class FaultDevice final : public BlockDevice {
 public:
  FaultDevice(std::unique_ptr<BlockDevice> inner, std::shared_ptr<FaultBudget> budget)
      : inner_(std::move(inner)), budget_(std::move(budget)) {}
  Status read_at(u64 physical, std::span<u8> buf) override { return inner_->read_at(physical, buf); }
  Status write_at(u64 physical, std::span<const u8> buf) override {
    if (!budget_->take_write())
      return make_error(Errc::io,
                        inner_->path() + ": write of " + std::to_string(buf.size()) + " bytes at physical " +
                            std::to_string(physical) + " dropped: " + budget_->describe(),
                        EIO);
    return inner_->write_at(physical, buf);
  }
  Status flush() override {
    // Nothing after the fail point reaches the device, a flush included.
    if (budget_->tripped()) return make_error(Errc::io, inner_->path() + ": flush dropped: " + budget_->describe(), EIO);
    return inner_->flush();
  }
  u64 size() const override { return inner_->size(); }
  u32 logical_block_size() const override { return inner_->logical_block_size(); }
  const std::string& path() const override { return inner_->path(); }

 private:
  std::unique_ptr<BlockDevice> inner_;
  std::shared_ptr<FaultBudget> budget_;
};
}  // namespace

std::unique_ptr<BlockDevice> make_fault_device(std::unique_ptr<BlockDevice> inner, std::shared_ptr<FaultBudget> budget) {
  FSCTL_ASSERT(budget != nullptr);
  return std::make_unique<FaultDevice>(std::move(inner), std::move(budget));
}

DeviceWrapper fault_wrapper(std::shared_ptr<FaultBudget> budget) {
  FSCTL_ASSERT(budget != nullptr);
  return [budget = std::move(budget)](std::unique_ptr<BlockDevice> d) { return make_fault_device(std::move(d), budget); };
}

}  // namespace fsctl::io
