"""B12's standard-tools reference: what any tool must do to make a bundle's release current.

Given a bundle file (docs/bundles.md: a POSIX tar of the channel's head, the table and the packs), it
makes the release's files in a fresh folder of a plain device — `releases/N/files/<uri>` with the
table and the index beside them, `current` a symbolic link to it — the way a tool built on the
standard tools would, and no more:
- the members are read where they lie in the tar (Python's `tarfile`: the headers, then each
  member's bytes; what `tar -xOf B MEMBER` does);
- the table and index: `zstd -d` of the compressed table (a first install), or `zstd -d
  --patch-from=<the table in force>` of the table's patch (a delta: from the head, base64, or its
  member);
- the files: a first install decodes the solid pack (`zstd -d`: each file's 8-byte length then its
  bytes) and writes each distinct file once, linking the uris that share it; a delta links every file
  the release in force has (`cp -al`), and decodes each frame of the delta pack (`zstd -d
  --patch-from=<its base>` for a patch, `zstd -d` for a compressed file) into its file;
- durability as cenariusd's import has it: one `syncfs` of the device's file system before the switch
  (`sync -f`), then the switch: the folder renamed into place, `current` flipped by a rename of a new
  symbolic link, and the folder holding them synced.
Decoding goes through libzstd itself (the library `zstd` is built on, through ctypes: the same
decoder, the same `--patch-from` prefix), in this process: a `zstd` process per patch would add a
process start per changed file (225 on streamlit's delta) that a tool need not pay, so the reference
is the stricter one. Run as a whole process (`python3 -S b12_reference.py BUNDLE DEVICE`: no site packages,
whose `.pth` files cost this machine's Python a quarter of a second), timed from outside as
`cenariusd import` is: a tool is started too. Without `--verify` nothing is hashed: the reference trusts the bundle, where an import checks every
file against its hash and the head's signature; with it, each file written is first checked against
its MD5 in the table (from the bytes in memory, as `md5sum -c` would after), the work of verification
an offline device cannot leave out (the signature's check, one Ed25519 verification, is left out). What it wrote is checked against the table after the clock stops.
"""
import base64
import ctypes
import ctypes.util
import hashlib
import json
import os
import tarfile

_zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
_zstd.ZSTD_createDCtx.restype = ctypes.c_void_p
_zstd.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
_zstd.ZSTD_DCtx_setParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
_zstd.ZSTD_DCtx_refPrefix.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_decompressDCtx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_decompressDCtx.restype = ctypes.c_size_t
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
_zstd.ZSTD_findFrameCompressedSize.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_zstd.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
ZSTD_d_windowLogMax = 100


def frames(data):
    """The zstd frames of `data`, one after another (each records where it ends)."""
    out, at, start = [], 0, ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value
    while at < len(data):
        size = _zstd.ZSTD_findFrameCompressedSize(start + at, len(data) - at)
        assert not _zstd.ZSTD_isError(size), "not a zstd frame"
        out.append(data[at:at + size])
        at += size
    return out


def decode(frame, prefix=None):
    """One frame decoded (`zstd -d`, or `zstd -d --patch-from=PREFIX`; --long=31's window), into a
    buffer of its own, not copied again."""
    size = _zstd.ZSTD_getFrameContentSize(frame, len(frame))
    assert size < 1 << 40, "a frame without its content size"
    dctx = _zstd.ZSTD_createDCtx()
    try:
        _zstd.ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, 31)
        prefix = bytes(prefix) if prefix is not None else None  # referenced, not copied: kept alive here
        if prefix is not None:
            _zstd.ZSTD_DCtx_refPrefix(dctx, prefix, len(prefix))
        out = bytearray(size)
        n = _zstd.ZSTD_decompressDCtx(dctx, (ctypes.c_char * max(size, 1)).from_buffer(out) if size else None, size, frame, len(frame))
        assert not _zstd.ZSTD_isError(n) and n == size, "a frame that does not decode"
        return memoryview(out)
    finally:
        _zstd.ZSTD_freeDCtx(dctx)


def members(bundle):
    with tarfile.open(bundle, "r:") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}


def table_entries(table):
    return json.loads(table)


def distinct(entries):
    """The table's distinct hashes in the order of their first uri (uris sorted): the packs' order."""
    seen, order = set(), []
    for e in sorted(entries, key=lambda e: e["uri"]):
        if e["hash"] not in seen:
            seen.add(e["hash"])
            order.append(e["hash"])
    return order


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def link(source, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.link(source, path)


def apply(bundle, device, verify=False):
    """Makes the bundle's release current on `device` (a folder; on a delta, left by an earlier
    `apply`); returns the release folder. `verify`: each file written is checked against the hash
    the table gives it first (MD5, as `md5sum -c` would, from the bytes at hand), as an import does."""
    m = members(bundle)
    head = json.loads(m["Routes.head"])
    table_size = head["table"]["size"]
    current = os.path.join(device, "current")
    base = os.path.realpath(current) if os.path.lexists(current) else None
    if base is None:
        both = b"".join(bytes(decode(f)) for f in frames(m["_cenarius/t/" + head["table"]["zst"] + ".zst"]))
    else:
        old_table = open(os.path.join(base, "Routes.json"), "rb").read()
        old_digest = hashlib.sha256(old_table).hexdigest()
        patch = next(p for p in head["table"]["patches"] if p["from"] == old_digest)
        body = base64.b64decode(patch["bytes"]) if "bytes" in patch else m["_cenarius/t/" + patch["sha256"] + ".patch"]
        both = b"".join(bytes(decode(f, prefix=old_table)) for f in frames(body))
    table, index = both[:table_size], json.loads(both[table_size:])
    entries = table_entries(table)
    number = int(os.path.basename(base)) + 1 if base else 1
    releases = os.path.join(device, "releases")
    building = os.path.join(releases, f"{number}.tmp")
    files = os.path.join(building, "files")
    os.makedirs(files)
    order = distinct(entries)
    first = {}  # hash → its bytes, or the path of a file that has them
    def pack_of(digest):
        return next(d for d in index["deltaPacks"] if d["from"] == digest)

    def solid(form, order):
        """hash → bytes of a solid pack (each file's 8-byte length, then its bytes, in `order`)."""
        parts = [decode(f) for f in frames(m["_cenarius/pack/" + form + ".pack"])]
        stream, at, out = parts[0] if len(parts) == 1 else memoryview(b"".join(parts)), 0, {}
        for h in order:
            n = int.from_bytes(stream[at:at + 8], "little")
            out[h] = stream[at + 8:at + 8 + n]
            at += 8 + n
        return out

    if base is None and "solidPack" in index:
        first.update(solid(index["solidPack"]["form"], order))
    else:
        if base is None:
            # A release that carries an earlier table's solid pack (release-bytes.md): that table's files
            # from it, then the delta pack from that table.
            old_digest = index["carriedPack"]["from"]
            old_entries = table_entries(m["_cenarius/t/" + old_digest + ".json"])
            held = solid(index["carriedPack"]["form"], distinct(old_entries))
        else:
            held = {e["hash"]: os.path.join(base, "files", e["uri"]) for e in table_entries(old_table)}
        content = lambda h: held[h] if isinstance(held[h], memoryview) else open(held[h], "rb").read()
        pack = pack_of(old_digest)
        new = [h for h in order if h not in held]
        for h, frame, b in zip(new, frames(m["_cenarius/pack/" + pack["form"] + ".pack"]), pack["bases"]):
            first[h] = decode(frame, prefix=content(b)) if b else decode(frame)
        for h in order:
            if h in held:
                first[h] = held[h]
    written = {}
    for e in entries:
        path = os.path.join(files, e["uri"])
        source = written.get(e["hash"])
        if source is None and isinstance(first[e["hash"]], str):
            source = first[e["hash"]]
        if source is not None:
            link(source, path)
        else:
            if verify and hashlib.md5(first[e["hash"]]).hexdigest() != e["hash"]:
                raise SystemExit(f"{e['uri']} does not match its hash")
            write(path, first[e["hash"]])
            written[e["hash"]] = path
    write(os.path.join(building, "Routes.json"), table)
    write(os.path.join(building, "index.json"), both[table_size:])
    # Durable before the switch: one syncfs, as the import's commit.
    fd = os.open(device, os.O_RDONLY | os.O_DIRECTORY)
    try:
        ctypes.CDLL(None, use_errno=True).syncfs(fd)
        final = os.path.join(releases, str(number))
        os.rename(building, final)
        os.symlink(os.path.join("releases", str(number)), current + ".new")
        os.rename(current + ".new", current)
        os.fsync(fd)
    finally:
        os.close(fd)
    return final


def check(release):
    """Every file of the release folder against its table (outside the timed part)."""
    for e in table_entries(open(os.path.join(release, "Routes.json"), "rb").read()):
        data = open(os.path.join(release, "files", e["uri"]), "rb").read()
        if hashlib.md5(data).hexdigest() != e["hash"]:
            return False
    return True


if __name__ == "__main__":
    import sys
    # As a tool is run: a whole process, timed from outside like `cenariusd import`.
    apply(sys.argv[1], sys.argv[2], verify="--verify" in sys.argv[3:])
