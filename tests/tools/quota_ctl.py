#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Test-only helper: quota control through the BTRFS_IOC_QUOTA_CTL ioctl on a
# mounted btrfs, for what Debian's btrfs-progs 6.2 cannot ask for (simple
# quotas came with kernel 6.7 and btrfs-progs 6.7: `btrfs quota enable -s`).
#
#   quota_ctl.py enable-simple MNT   enable simple quotas (squota)
#   quota_ctl.py enable MNT          enable full qgroup accounting
#   quota_ctl.py disable MNT
#
# Exit 0 on success; on a refusal the kernel's errno is printed and the exit
# code is 3 (EINVAL/EOPNOTSUPP/ENOTTY: this kernel does not support the
# command) or 1 (anything else).
# Numbers: include/uapi/linux/btrfs.h (BTRFS_IOCTL_MAGIC 0x94, nr 40,
# struct btrfs_ioctl_quota_ctl_args {u64 cmd; u64 status;}, 16 bytes;
# BTRFS_QUOTA_CTL_ENABLE 1, _DISABLE 2, _ENABLE_SIMPLE_QUOTA 4).
import errno, fcntl, os, struct, sys

BTRFS_IOCTL_MAGIC = 0x94
IOC_WRITE, IOC_READ = 1, 2


def iowr(magic, nr, size):
    return ((IOC_READ | IOC_WRITE) << 30) | (size << 16) | (magic << 8) | nr


BTRFS_IOC_QUOTA_CTL = iowr(BTRFS_IOCTL_MAGIC, 40, 16)
COMMANDS = {"enable": 1, "disable": 2, "enable-simple": 4}


def main(argv):
    if len(argv) != 3 or argv[1] not in COMMANDS:
        print("usage: quota_ctl.py enable-simple|enable|disable MNT", file=sys.stderr)
        return 2
    fd = os.open(argv[2], os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, BTRFS_IOC_QUOTA_CTL, bytearray(struct.pack("<QQ", COMMANDS[argv[1]], 0)))
    except OSError as e:
        print(f"quota_ctl.py: {argv[1]} on {argv[2]}: {os.strerror(e.errno)} ({errno.errorcode.get(e.errno, e.errno)})",
              file=sys.stderr)
        return 3 if e.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTTY) else 1
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
