// SPDX-License-Identifier: GPL-2.0-only
// Fail point after the N-th write (crash consistency tests, invariant 3).
#include "lib/io/fault_device.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace fsctl::io {
namespace {
std::atomic<u64> g_writes{0};

class FaultDevice final : public BlockDevice {
 public:
  FaultDevice(std::unique_ptr<BlockDevice> inner, u64 n) : inner_(std::move(inner)), n_(n) {}
  Status read_at(u64 physical, std::span<u8> buf) override { return inner_->read_at(physical, buf); }
  Status write_at(u64 physical, std::span<const u8> buf) override {
    auto r = inner_->write_at(physical, buf);
    if (++g_writes >= n_) {
      (void)inner_->flush();  // what reached the device stays there; nothing after it
      ::_exit(FAIL_POINT_EXIT);
    }
    return r;
  }
  Status flush() override { return inner_->flush(); }
  u64 size() const override { return inner_->size(); }
  u32 logical_block_size() const override { return inner_->logical_block_size(); }
  const std::string& path() const override { return inner_->path(); }

 private:
  std::unique_ptr<BlockDevice> inner_;
  u64 n_;
};
}  // namespace

std::optional<u64> fail_after_writes_from_env() {
  const char* v = std::getenv(FAIL_AFTER_WRITES_ENV);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (*end || n == 0) return std::nullopt;
  return static_cast<u64>(n);
}

std::unique_ptr<BlockDevice> make_fault_device(std::unique_ptr<BlockDevice> inner, u64 n) {
  return std::make_unique<FaultDevice>(std::move(inner), n);
}

u64 fault_device_writes() { return g_writes.load(); }

}  // namespace fsctl::io
