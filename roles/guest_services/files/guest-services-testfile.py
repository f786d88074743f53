#!/usr/bin/python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the FTP workload's test file: SIZE bytes, deterministic and incompressible.

Usage: guest-services-testfile.py PATH SIZE_BYTES SEED STAMP_PATH

Chunk i (1 MiB) is SHAKE-256("SEED:i") stretched to the chunk length, so the same
seed and size give the same bytes everywhere (Python's hashlib, no other tool).
The file is written beside itself and renamed; then STAMP_PATH gets a JSON
document {path, bytes, seed, sha256}, also atomically, and is printed.
"""

import hashlib
import json
import os
import sys

CHUNK = 1 << 20


def write_atomically(path, writer):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as out:
            writer(out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    path, size, seed, stamp = argv[1], int(argv[2]), argv[3], argv[4]
    digest = hashlib.sha256()

    def data(out):
        done, index = 0, 0
        while done < size:
            block = hashlib.shake_256(("%s:%d" % (seed, index)).encode()).digest(min(CHUNK, size - done))
            out.write(block)
            digest.update(block)
            done += len(block)
            index += 1

    write_atomically(path, data)
    doc = {"path": path, "bytes": size, "seed": seed, "sha256": digest.hexdigest()}
    text = json.dumps(doc, sort_keys=True) + "\n"
    write_atomically(stamp, lambda out: out.write(text.encode()))
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
