// SPDX-License-Identifier: GPL-2.0-only
// In-memory device (LevelDB memenv idea) over sparse copy-on-write pages:
// tests run without touching disks, and a crash test's snapshot of a whole
// image costs its page table.
#include "lib/io/memory_device.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "lib/base/assert.h"

namespace fsctl::io {

MemoryImage::MemoryImage(u64 size) : size_(size), pages_((size + PAGE_BYTES - 1) / PAGE_BYTES) {}

MemoryImage::MemoryImage(const MemoryImage& other) {
  std::shared_lock lock(other.mu_);
  size_ = other.size_;
  pages_ = other.pages_;
}

MemoryImage& MemoryImage::operator=(const MemoryImage& other) {
  if (this == &other) return *this;
  std::vector<std::shared_ptr<Page>> pages;
  u64 size;
  {
    std::shared_lock lock(other.mu_);
    size = other.size_;
    pages = other.pages_;
  }
  std::unique_lock lock(mu_);
  size_ = size;
  pages_ = std::move(pages);
  return *this;
}

Status MemoryImage::read(u64 physical, std::span<u8> buf) const {
  if (physical > size_ || buf.size() > size_ - physical)
    return make_error(Errc::corrupt, "read past the end of the device at physical " + std::to_string(physical));
  std::shared_lock lock(mu_);
  for (u64 done = 0; done < buf.size();) {
    u64 at = physical + done, page = at / PAGE_BYTES, in = at % PAGE_BYTES;
    u64 n = std::min<u64>(PAGE_BYTES - in, buf.size() - done);
    if (const auto& p = pages_[page])
      std::memcpy(buf.data() + done, p->data() + in, n);
    else
      std::memset(buf.data() + done, 0, n);
    done += n;
  }
  return {};
}

Status MemoryImage::write(u64 physical, std::span<const u8> buf) {
  if (physical > size_ || buf.size() > size_ - physical)
    return make_error(Errc::invalid_argument, "write past the end of the device at physical " + std::to_string(physical));
  std::unique_lock lock(mu_);
  for (u64 done = 0; done < buf.size();) {
    u64 at = physical + done, page = at / PAGE_BYTES, in = at % PAGE_BYTES;
    u64 n = std::min<u64>(PAGE_BYTES - in, buf.size() - done);
    auto src = buf.subspan(done, n);
    auto& p = pages_[page];
    if (!p) {
      if (std::all_of(src.begin(), src.end(), [](u8 b) { return b == 0; })) {
        done += n;
        continue;
      }
      p = std::make_shared<Page>(PAGE_BYTES, 0);
    } else if (p.use_count() > 1) {
      // Shared with a copy: this image gets its own page. The count cannot
      // rise under us: copying this image takes the lock we hold.
      p = std::make_shared<Page>(*p);
    }
    std::memcpy(p->data() + in, src.data(), n);
    done += n;
  }
  return {};
}

u64 MemoryImage::pages_allocated() const {
  std::shared_lock lock(mu_);
  return static_cast<u64>(std::count_if(pages_.begin(), pages_.end(), [](const auto& p) { return p != nullptr; }));
}

namespace {
class MemoryDevice final : public BlockDevice {
 public:
  MemoryDevice(std::shared_ptr<MemoryImage> image, std::string name) : image_(std::move(image)), name_(std::move(name)) {}
  Status read_at(u64 physical, std::span<u8> buf) override {
    auto r = image_->read(physical, buf);
    if (!r) return make_error(r.error().context(name_));
    return {};
  }
  Status write_at(u64 physical, std::span<const u8> buf) override {
    auto r = image_->write(physical, buf);
    if (!r) return make_error(r.error().context(name_));
    return {};
  }
  Status flush() override { return {}; }
  u64 size() const override { return image_->size(); }
  u32 logical_block_size() const override { return 512; }
  const std::string& path() const override { return name_; }

 private:
  std::shared_ptr<MemoryImage> image_;
  std::string name_;
};
}  // namespace

std::unique_ptr<BlockDevice> make_memory_device(std::shared_ptr<MemoryImage> image, std::string name) {
  FSCTL_ASSERT(image != nullptr);
  return std::make_unique<MemoryDevice>(std::move(image), std::move(name));
}

std::unique_ptr<BlockDevice> make_memory_device(std::vector<u8> bytes, std::string name) {
  auto image = std::make_shared<MemoryImage>(bytes.size());
  (void)image->write(0, bytes);  // in range by construction
  return make_memory_device(std::move(image), std::move(name));
}

}  // namespace fsctl::io
