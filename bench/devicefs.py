"""The devices' own file system in the benches that run several devices on one machine (B11, B12)."""
import contextlib
import os
import subprocess


@contextlib.contextmanager
def devices_filesystem(folder, image, size=2 << 30):
    """An ext4 of the devices' own (journaled, mkfs's defaults), in memory, loop-mounted at `folder`
    when this runs as root; else `folder` as it is. Yields whether it is mounted.

    Why: a device has a disk of its own, not the bench's. B12's imports end with a syncfs, which on
    the shared disk waits for whatever other processes wrote. B11's eight daemons create and remove
    thousands of files on one file system, and this machine's root ext4 has no journal: without one,
    ext4 checks every candidate inode against those recently deleted before it reuses one
    (`find_inode_bit` → `recently_deleted`), which under that churn took a third of the run's CPU
    (perf, 2026-11-28), a cost no device with a journaled (or any other) file system pays."""
    if os.path.ismount(folder):
        subprocess.run(["umount", folder])
    os.makedirs(folder, exist_ok=True)
    mounted = False
    try:
        with open(image, "wb") as f:
            f.truncate(size)
        subprocess.run(["mkfs.ext4", "-q", "-F", image], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["mount", "-o", "loop", image, folder], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mounted = True
    except (OSError, subprocess.CalledProcessError):
        pass
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", folder])
        with contextlib.suppress(OSError):
            os.remove(image)


def image_path(out, name):
    """Where a devices' image goes: in memory when there is /dev/shm."""
    return f"/dev/shm/{name}.img" if os.path.isdir("/dev/shm") else os.path.join(out, f"{name}.img")
