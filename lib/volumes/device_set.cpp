// SPDX-License-Identifier: GPL-2.0-only
// Device discovery and superblock selection (DESIGN.md "Reading").
#include "lib/volumes/device_set.h"

#include <cstring>

namespace fsctl::volumes {
using namespace fsctl::format;

Result<Device> read_device_supers(std::unique_ptr<io::BlockDevice> dev) {
  Device d;
  d.path = dev->path();
  int best = -1;
  for (int m = 0; m < SUPER_MIRROR_MAX; ++m) {
    SuperCopyState st;
    st.mirror = m;
    st.physical = super_mirror_offset(m);
    st.fits = st.physical + SUPER_INFO_SIZE <= dev->size();
    if (!st.fits) {
      d.copies.push_back(st);
      continue;
    }
    SuperBlock sb{};
    auto r = dev->read_at(st.physical, super_bytes(sb));
    if (!r) {
      st.problem = r.error().message;
    } else if (auto v = validate_super(sb, st.physical); !v) {
      st.problem = v.error().message;
    } else {
      st.valid = true;
      st.generation = sb.generation.get();
      if (best < 0 || st.generation > d.super.generation.get()) {
        d.super = sb;
        best = m;
      }
    }
    d.copies.push_back(st);
  }
  if (best < 0) {
    std::string why;
    for (auto& c : d.copies) {
      if (!c.fits) continue;
      if (!why.empty()) why += "; ";
      why += "copy " + std::to_string(c.mirror) + " at " + std::to_string(c.physical) + ": " + c.problem;
    }
    if (d.copies.empty() || !d.copies[0].fits)
      return make_error(Errc::corrupt, d.path + ": device of " + std::to_string(dev->size()) +
                                           " bytes is too small to hold a btrfs superblock (truncated image?)");
    bool any_magic = false;
    for (auto& c : d.copies)
      if (c.fits && c.problem.find("no btrfs magic") == std::string::npos) any_magic = true;
    return make_error(any_magic ? Errc::corrupt : Errc::invalid_argument,
                      d.path + ": no valid btrfs superblock (" + why + ")");
  }
  // A valid copy whose fsid differs from the chosen one belongs to an older
  // filesystem on the same device (mkfs leaves mirrors beyond the new size alone).
  for (auto& c : d.copies) {
    if (c.valid && c.mirror != best) {
      SuperBlock other{};
      if (dev->read_at(c.physical, super_bytes(other)) &&
          std::memcmp(other.fsid, d.super.fsid, FSID_SIZE) != 0) {
        c.valid = false;
        c.problem = "belongs to another filesystem (fsid " + uuid_to_string(other.fsid) + ")";
      }
    }
  }
  d.super_mirror = best;
  d.devid = d.super.dev_item.devid.get();
  std::memcpy(d.uuid.data(), d.super.dev_item.uuid, UUID_SIZE);
  d.dev = std::move(dev);
  return d;
}

Result<DeviceSet> DeviceSet::from_devices(std::vector<std::unique_ptr<io::BlockDevice>> devs, Reporter& reporter) {
  DeviceSet set;
  if (devs.empty()) return make_error(Errc::invalid_argument, "no device given");
  for (auto& bd : devs) {
    std::string path = bd->path();
    FSCTL_TRY_ASSIGN(Device d, read_device_supers(std::move(bd)));
    for (auto& c : d.copies) {
      if (!c.fits) continue;
      if (!c.valid && c.mirror == 0)
        reporter.warning(path + ": primary superblock at " + std::to_string(c.physical) + " is damaged (" + c.problem +
                         "); using copy " + std::to_string(d.super_mirror) + " at " +
                         std::to_string(d.copies[static_cast<std::size_t>(d.super_mirror)].physical));
      else if (!c.valid)
        reporter.warning(path + ": superblock copy " + std::to_string(c.mirror) + " at " + std::to_string(c.physical) +
                         " is damaged: " + c.problem);
      else if (c.generation < d.super.generation.get())
        reporter.warning(path + ": superblock copy " + std::to_string(c.mirror) + " at " + std::to_string(c.physical) +
                         " is stale, has generation " + std::to_string(c.generation) + " expect " +
                         std::to_string(d.super.generation.get()));
    }
    // A device of another filesystem usually has the same devid (1) as the
    // right one, so the fsid is checked first to name the real problem.
    if (!set.devices_.empty()) {
      const SuperBlock& ref = set.devices_.begin()->second.super;
      if (std::memcmp(ref.fsid, d.super.fsid, FSID_SIZE) != 0)
        return make_error(Errc::invalid_argument, path + ": belongs to filesystem " + uuid_to_string(d.super.fsid) +
                                                      ", not " + uuid_to_string(ref.fsid) + " of " +
                                                      set.devices_.begin()->second.path);
    }
    if (set.devices_.count(d.devid))
      return make_error(Errc::invalid_argument, path + ": devid " + std::to_string(d.devid) + " given twice (also " +
                                                    set.devices_.at(d.devid).path + ")");
    // The kernel refuses a device smaller than its DEV_ITEM total_bytes
    // ("device total_bytes should be at most ..."): a truncated image has lost
    // blocks (often the second DUP copy) even when the first reads work.
    u64 total = d.super.dev_item.total_bytes.get();
    if (d.dev->size() < total)
      return make_error(Errc::corrupt, path + ": device is " + std::to_string(d.dev->size()) +
                                           " bytes, smaller than its total_bytes " + std::to_string(total) +
                                           " in the superblock (truncated image?)");
    u64 devid = d.devid;
    set.devices_.emplace(devid, std::move(d));
  }
  u64 best_gen = 0;
  for (auto& [devid, d] : set.devices_) {
    if (set.latest_devid_ == 0 || d.super.generation.get() > best_gen) {
      best_gen = d.super.generation.get();
      set.latest_devid_ = devid;
    }
  }
  for (auto& [devid, d] : set.devices_)
    if (d.super.generation.get() != best_gen)
      reporter.warning(d.path + ": superblock generation " + std::to_string(d.super.generation.get()) +
                       " lags the filesystem's " + std::to_string(best_gen) + " (device was missing for a while?)");
  return set;
}

Result<DeviceSet> DeviceSet::open(const std::vector<std::string>& paths, io::OpenMode mode, Reporter& reporter) {
  std::vector<std::unique_ptr<io::BlockDevice>> devs;
  for (auto& p : paths) {
    FSCTL_TRY_ASSIGN(auto d, io::open_device(p, mode, reporter));
    devs.push_back(std::move(d));
  }
  return from_devices(std::move(devs), reporter);
}

std::vector<std::string> DeviceSet::lagging_supers() const {
  std::vector<std::string> out;
  const u64 gen = super().generation.get();
  for (auto& [devid, d] : devices_)
    for (auto& c : d.copies) {
      if (!c.fits) continue;
      std::string where = d.path + ": superblock copy " + std::to_string(c.mirror) + " at " + std::to_string(c.physical);
      if (!c.valid)
        out.push_back(where + " is damaged (" + c.problem + ")");
      else if (c.generation < gen)
        out.push_back(where + " has generation " + std::to_string(c.generation) + ", the filesystem " + std::to_string(gen));
    }
  return out;
}

}  // namespace fsctl::volumes
