#!/usr/bin/env python3
# Write a deterministic, compressible text file of N MB (the compression input of
# roles/container_compare): the same bytes in every guest, so only the platform differs.
#   make-text.py PATH MB
import random
import sys

WORDS = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et "
         "dolore magna aliqua container kernel namespace cgroup bridge packet socket storage overlay image").split()


def main(path, megabytes):
    rng = random.Random(20261123)
    target = int(megabytes) * 1000 * 1000
    written = 0
    tmp = path + ".part"
    with open(tmp, "w", encoding="ascii") as out:
        while written < target:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + "\n"
            line = line[: target - written] if written + len(line) > target else line
            out.write(line)
            written += len(line)
    import os
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
