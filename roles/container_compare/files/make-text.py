#!/usr/bin/env python3
# Write a deterministic, compressible text file of N MB (the compression input of
# roles/container_compare): the same bytes in every guest, so only the platform
# differs. An 8 MB block of seeded pseudo-text is written again and again: xz's
# dictionary at levels 0-6 (at most 8 MiB) does not reach back a whole block, so
# every block compresses like new text, and the file is written at disk speed
# (even in an emulated guest).
#   make-text.py PATH MB
import os
import random
import sys

WORDS = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et "
         "dolore magna aliqua container kernel namespace cgroup bridge packet socket storage overlay image").split()
BLOCK = 8 * 1000 * 1000


def block():
    rng = random.Random(20261123)
    lines, size = [], 0
    while size < BLOCK:
        line = " ".join(rng.choice(WORDS) for _word in range(rng.randint(6, 14))) + "\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)[:BLOCK].encode("ascii")


def main(path, megabytes):
    target = int(megabytes) * 1000 * 1000
    data = block()
    tmp = path + ".part"
    with open(tmp, "wb") as out:
        written = 0
        while written < target:
            piece = data[: target - written]
            out.write(piece)
            written += len(piece)
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
