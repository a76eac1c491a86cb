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


@contextlib.contextmanager
def own_filesystems(folder, count, images, size=512 << 20):
    """`count` devices' file systems, one each (`devices_filesystem` at folder/disk1..diskN, each on its
    own image, `images`-1.img..): yields their roots, and whether they are mounted.

    Why one each: a device's durability barrier (`syncfs`, before verified objects get their names)
    waits for every dirty page of the file system it is on. Eight devices on one file system made each
    device's barrier wait for the other seven's writes: B11's askers adopt what a peer gave them in
    batches, each behind a syncfs, and on one shared ext4 a batch waited 0.4-0.7 s for the others'
    writes (2026-11-28, CENARIUS_PEER_DEBUG timeline), a cost no device with a disk of its own pays."""
    roots = [os.path.join(folder, f"disk{i}") for i in range(1, count + 1)]
    with contextlib.ExitStack() as stack:
        mounted = [stack.enter_context(devices_filesystem(root, f"{images}-{i}.img", size)) for i, root in enumerate(roots, 1)]
        yield roots, all(mounted)


def image_path(out, name):
    """Where a devices' image goes: in memory when there is /dev/shm."""
    return f"/dev/shm/{name}.img" if os.path.isdir("/dev/shm") else os.path.join(out, f"{name}.img")
