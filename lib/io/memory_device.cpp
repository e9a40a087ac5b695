// SPDX-License-Identifier: GPL-2.0-only
// In-memory device (LevelDB memenv idea): tests run without touching disks.
#include "lib/io/memory_device.h"

#include <cstring>

namespace fsctl::io {
namespace {
class MemoryDevice final : public BlockDevice {
 public:
  MemoryDevice(std::vector<u8> bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {}
  Status read_at(u64 physical, std::span<u8> buf) override {
    if (physical > bytes_.size() || buf.size() > bytes_.size() - physical)
      return make_error(Errc::corrupt, name_ + ": read past the end of the device at physical " + std::to_string(physical));
    std::memcpy(buf.data(), bytes_.data() + physical, buf.size());
    return {};
  }
  Status write_at(u64 physical, std::span<const u8> buf) override {
    if (physical > bytes_.size() || buf.size() > bytes_.size() - physical)
      return make_error(Errc::invalid_argument, name_ + ": write past the end of the device at physical " + std::to_string(physical));
    std::memcpy(bytes_.data() + physical, buf.data(), buf.size());
    return {};
  }
  Status flush() override { return {}; }
  u64 size() const override { return bytes_.size(); }
  u32 logical_block_size() const override { return 512; }
  const std::string& path() const override { return name_; }

 private:
  std::vector<u8> bytes_;
  std::string name_;
};
}  // namespace

std::unique_ptr<BlockDevice> make_memory_device(std::vector<u8> bytes, std::string name) {
  return std::make_unique<MemoryDevice>(std::move(bytes), std::move(name));
}

}  // namespace fsctl::io
