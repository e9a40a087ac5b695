// SPDX-License-Identifier: GPL-2.0-only
// O_DIRECT device over a regular file or a block device. Unaligned requests are
// served through an aligned bounce buffer covering the enclosing blocks, so
// callers above never think about alignment (DESIGN.md "Reading").
#include "lib/io/direct_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "lib/base/bytes.h"
#include "lib/io/aligned_buffer.h"
#include "lib/io/mount_check.h"

namespace fsctl::io {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

class DirectDevice final : public BlockDevice {
 public:
  DirectDevice(std::string path, int fd, bool direct, u64 size, u32 lbs, Reporter& reporter)
      : path_(std::move(path)), fd_(fd), direct_(direct), size_(size), lbs_(lbs), reporter_(reporter) {}
  ~DirectDevice() override { ::close(fd_); }

  Status read_at(u64 physical, std::span<u8> buf) override {
    if (physical > size_ || buf.size() > size_ - physical)
      return make_error(Errc::corrupt, path_ + ": read of " + std::to_string(buf.size()) + " bytes at physical " +
                                           std::to_string(physical) + " is past the end of the device (size " +
                                           std::to_string(size_) + ")");
    if (!direct_) return raw_read(physical, buf);
    u64 start = physical / lbs_ * lbs_;
    u64 end = (physical + buf.size() + lbs_ - 1) / lbs_ * lbs_;
    bool aligned = start == physical && end == physical + buf.size() &&
                   is_aligned(buf.data(), lbs_);
    if (aligned) {
      auto r = raw_read(physical, buf);
      if (r || r.error().sys_errno != EINVAL) return r;
      return fall_back_and_read(physical, buf);
    }
    AlignedBuffer bounce(end - start, lbs_);
    auto r = raw_read(start, bounce.span());
    if (!r) {
      if (r.error().sys_errno != EINVAL) return r;
      return fall_back_and_read(physical, buf);
    }
    std::memcpy(buf.data(), bounce.data() + (physical - start), buf.size());
    return {};
  }

  Status write_at(u64 physical, std::span<const u8> buf) override {
    if (physical > size_ || buf.size() > size_ - physical)
      return make_error(Errc::invalid_argument, path_ + ": write past the end of the device at physical " +
                                                    std::to_string(physical));
    if (!direct_) return raw_write(physical, buf);
    u64 start = physical / lbs_ * lbs_;
    u64 end = (physical + buf.size() + lbs_ - 1) / lbs_ * lbs_;
    bool aligned = start == physical && end == physical + buf.size() &&
                   is_aligned(buf.data(), lbs_);
    if (aligned) return raw_write(physical, buf);
    AlignedBuffer bounce(end - start, lbs_);
    if (start != physical || end != physical + buf.size()) FSCTL_TRY(raw_read(start, bounce.span()));
    std::memcpy(bounce.data() + (physical - start), buf.data(), buf.size());
    return raw_write(start, bounce.span());
  }

  Status flush() override {
    if (::fdatasync(fd_) != 0)
      return make_error(Errc::io, path_ + ": fdatasync: " + errno_text(errno), errno);
    return {};
  }
  u64 size() const override { return size_; }
  u32 logical_block_size() const override { return lbs_; }
  const std::string& path() const override { return path_; }

 private:
  Status raw_read(u64 physical, std::span<u8> buf) {
    std::size_t done = 0;
    while (done < buf.size()) {
      ssize_t n = ::pread(fd_, buf.data() + done, buf.size() - done, static_cast<off_t>(physical + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        return make_error(Errc::io, path_ + ": read at physical " + std::to_string(physical + done) + ": " + errno_text(e), e);
      }
      if (n == 0)
        return make_error(Errc::corrupt, path_ + ": short read at physical " + std::to_string(physical + done) +
                                             " (device truncated?)");
      done += static_cast<std::size_t>(n);
    }
    return {};
  }
  Status raw_write(u64 physical, std::span<const u8> buf) {
    std::size_t done = 0;
    while (done < buf.size()) {
      ssize_t n = ::pwrite(fd_, buf.data() + done, buf.size() - done, static_cast<off_t>(physical + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        return make_error(Errc::io, path_ + ": write at physical " + std::to_string(physical + done) + ": " + errno_text(e), e);
      }
      done += static_cast<std::size_t>(n);
    }
    return {};
  }
  // The file system accepted O_DIRECT at open but refuses the I/O (EINVAL):
  // switch this device to buffered I/O for good.
  Status fall_back_and_read(u64 physical, std::span<u8> buf) {
    int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT);
    direct_ = false;
    reporter_.notice(path_ + ": O_DIRECT refused, using buffered I/O");
    return raw_read(physical, buf);
  }

  std::string path_;
  int fd_;
  std::atomic<bool> direct_;  // read_at may run on several threads (read-ahead)
  u64 size_;
  u32 lbs_;
  Reporter& reporter_;
};

}  // namespace

Result<std::unique_ptr<BlockDevice>> open_device(const std::string& path, OpenMode mode, Reporter& reporter) {
  if (mode.write) {
    FSCTL_TRY_ASSIGN(auto where, find_mount(path));
    if (where) return make_error(Errc::busy, path + ": device is mounted on " + *where + "; unmount it first");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(Errc::io, path + ": " + errno_text(errno), errno);
  bool is_blk = S_ISBLK(st.st_mode);
  if (!is_blk && !S_ISREG(st.st_mode))
    return make_error(Errc::invalid_argument, path + ": not a regular file or block device");
  int flags = (mode.write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  if (is_blk && mode.exclusive) flags |= O_EXCL;
  bool direct = mode.direct;
  int fd = -1;
  if (direct) {
    fd = ::open(path.c_str(), flags | O_DIRECT);
    if (fd < 0 && errno == EINVAL) {
      reporter.notice(path + ": O_DIRECT refused by the file system, using buffered I/O");
      direct = false;
    } else if (fd < 0) {
      int e = errno;
      return make_error(Errc::io, path + ": open: " + errno_text(e), e);
    }
  }
  if (fd < 0) {
    fd = ::open(path.c_str(), flags);
    if (fd < 0) {
      int e = errno;
      return make_error(e == EBUSY ? Errc::busy : Errc::io, path + ": open: " + errno_text(e), e);
    }
  }
  if (mode.write && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // One writer per device: a second fsctl write command (or anything else
    // holding the lock) would commit on top of a stale view.
    int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK)
      return make_error(Errc::busy, path + ": device is in use by another writer (fsctl holds it locked); try again when it has finished");
    return make_error(Errc::io, path + ": flock: " + errno_text(e), e);
  }
  u64 size = static_cast<u64>(st.st_size);
  u32 lbs = 512;
  if (is_blk) {
    u64 bytes = 0;
    if (::ioctl(fd, BLKGETSIZE64, &bytes) == 0) size = bytes;
    int ssz = 0;
    if (::ioctl(fd, BLKSSZGET, &ssz) == 0 && ssz > 0) lbs = static_cast<u32>(ssz);
  } else {
    // Regular files: the backing file system's block size is a safe O_DIRECT
    // alignment (4096 on ext4/xfs); 512 may be refused.
    lbs = st.st_blksize > 0 && st.st_blksize <= 65536 ? static_cast<u32>(st.st_blksize) : 4096;
  }
  return std::unique_ptr<BlockDevice>(new DirectDevice(path, fd, direct, size, lbs, reporter));
}

}  // namespace fsctl::io
