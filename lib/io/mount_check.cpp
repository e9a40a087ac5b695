// SPDX-License-Identifier: GPL-2.0-only
// Mounted-device detection (DESIGN.md invariant 6: refuse a mounted device).
#include "lib/io/mount_check.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace fsctl::io {
namespace {

// mountinfo field 3 is "major:minor", field 5 the mount point (octal-escaped),
// and the first field after " - " the fs type, then the mount source. btrfs
// reports an anonymous major:minor (0:N) for every mount, so the source
// device (e.g. /dev/loop1) is matched too.
std::optional<std::string> mount_point_of(unsigned major_no, unsigned minor_no) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::string want = std::to_string(major_no) + ":" + std::to_string(minor_no);
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string id, parent, devno, root, mnt;
    if (!(ls >> id >> parent >> devno >> root >> mnt)) continue;
    if (devno == want) return mnt;
    auto sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream tail(line.substr(sep + 3));
    std::string fstype, source;
    if (!(tail >> fstype >> source) || source.rfind("/dev/", 0) != 0) continue;
    struct stat st {};
    if (::stat(source.c_str(), &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) == major_no &&
        minor(st.st_rdev) == minor_no)
      return mnt;
  }
  return std::nullopt;
}

}  // namespace

Result<std::optional<std::string>> find_mount(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(Errc::io, path + ": " + std::strerror(errno), errno);
  if (S_ISBLK(st.st_mode)) return mount_point_of(major(st.st_rdev), minor(st.st_rdev));
  if (!S_ISREG(st.st_mode)) return std::optional<std::string>{};
  std::error_code ec;
  auto canon = std::filesystem::canonical(path, ec);
  if (ec) return std::optional<std::string>{};
  for (auto& ent : std::filesystem::directory_iterator("/sys/block", ec)) {
    auto name = ent.path().filename().string();
    if (name.rfind("loop", 0) != 0) continue;
    std::ifstream bf(ent.path() / "loop" / "backing_file");
    std::string backing;
    if (!std::getline(bf, backing)) continue;
    std::error_code ec2;
    auto bcanon = std::filesystem::canonical(backing, ec2);
    if (ec2 || bcanon != canon) continue;
    std::ifstream devf(ent.path() / "dev");
    std::string devno;
    if (!std::getline(devf, devno)) continue;
    unsigned ma = 0, mi = 0;
    if (std::sscanf(devno.c_str(), "%u:%u", &ma, &mi) != 2) continue;
    if (auto mnt = mount_point_of(ma, mi)) return mnt;
  }
  return std::optional<std::string>{};
}

bool fsid_is_mounted(const std::string& fsid_text) {
  std::error_code ec;
  return std::filesystem::exists("/sys/fs/btrfs/" + fsid_text, ec);
}

}  // namespace fsctl::io
