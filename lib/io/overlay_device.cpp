// SPDX-License-Identifier: GPL-2.0-only
// OverlayDevice (overlay_device.h): writes kept in 4 KiB pages in memory,
// reads merged over the lower device.
#include "lib/io/overlay_device.h"

#include <array>
#include <cstring>
#include <map>

namespace fsctl::io {
namespace {

constexpr u64 PAGE = 4096;

class OverlayDevice final : public BlockDevice {
 public:
  OverlayDevice(BlockDevice& lower, std::shared_ptr<OverlayBudget> budget) : lower_(lower), budget_(std::move(budget)) {}

  Status read_at(u64 physical, std::span<u8> buf) override {
    FSCTL_TRY(lower_.read_at(physical, buf));
    std::lock_guard<std::mutex> g(lock_);
    u64 end = physical + buf.size();
    for (auto it = pages_.lower_bound(physical / PAGE); it != pages_.end() && it->first * PAGE < end; ++it) {
      u64 page_start = it->first * PAGE;
      u64 from = std::max(page_start, physical), to = std::min(page_start + PAGE, end);
      std::memcpy(buf.data() + (from - physical), it->second->data() + (from - page_start), to - from);
    }
    return {};
  }

  Status write_at(u64 physical, std::span<const u8> buf) override {
    if (physical > size() || buf.size() > size() - physical)
      return make_error(Errc::invalid_argument, path() + ": write past the end of the device at physical " + std::to_string(physical));
    u64 end = physical + buf.size();
    std::lock_guard<std::mutex> g(lock_);
    for (u64 page = physical / PAGE; page * PAGE < end; ++page) {
      auto it = pages_.find(page);
      if (it == pages_.end()) {
        if (budget_ && !take_page()) {
          return make_error(Errc::nospc, "rehearsal of the write job needs more than " + std::to_string(budget_->limit) +
                                             " bytes of memory for its writes");
        }
        auto data = std::make_unique<std::array<u8, PAGE>>();
        u64 page_start = page * PAGE;
        // A partly written page keeps the lower device's other bytes.
        if (physical > page_start || end < page_start + PAGE)
          FSCTL_TRY(lower_.read_at(page_start, std::span<u8>(data->data(), std::min<u64>(PAGE, size() - page_start))));
        it = pages_.emplace(page, std::move(data)).first;
      }
      u64 page_start = page * PAGE;
      u64 from = std::max(page_start, physical), to = std::min(page_start + PAGE, end);
      std::memcpy(it->second->data() + (from - page_start), buf.data() + (from - physical), to - from);
    }
    return {};
  }

  Status flush() override { return {}; }
  u64 size() const override { return lower_.size(); }
  u32 logical_block_size() const override { return lower_.logical_block_size(); }
  const std::string& path() const override { return lower_.path(); }

 private:
  // One more page of the shared budget; false (and `exceeded`) past it.
  bool take_page() {
    std::lock_guard<std::mutex> g(budget_->lock);
    if (budget_->used + PAGE > budget_->limit) {
      budget_->exceeded = true;
      return false;
    }
    budget_->used += PAGE;
    return true;
  }

  BlockDevice& lower_;
  std::mutex lock_;
  std::shared_ptr<OverlayBudget> budget_;
  std::map<u64, std::unique_ptr<std::array<u8, PAGE>>> pages_;
};

}  // namespace

std::unique_ptr<BlockDevice> make_overlay_device(BlockDevice& lower, std::shared_ptr<OverlayBudget> budget) {
  return std::make_unique<OverlayDevice>(lower, std::move(budget));
}

}  // namespace fsctl::io
