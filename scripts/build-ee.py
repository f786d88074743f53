#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the execution environment image locally, from the lab's Debian image (docs/collection.md).

    python scripts/build-ee.py [--tag testbed-ee:local] [--base-from testbed/debian:bookworm] [--check]

No registry is asked: the base ``testbed-ee-base:bookworm`` is built from ``ee/base/Dockerfile`` FROM
the lab's Debian image (roles/lab_images makes it from a debootstrap rootfs: ``make images``), with the
host's own CA certificates (``/usr/local/share/ca-certificates``) trusted in it as on the host, so pip
reaches PyPI through a proxy the host trusts. Then the collection is built (``scripts/build-collection.py``,
the tree only) and ``ansible-builder build`` makes the image from ``ee/execution-environment-local.yml``.

Each image carries a label with the hash of its inputs (``testbed.ee.inputs``): the base's Dockerfile and
files, the CA certificates and the Debian image's id; the image's definition, ``ee/`` requirement files,
the built collection's files, the base's id and ansible-builder's version. An image whose label matches
is reused, so a second run builds nothing. ``--check`` only says whether the image is up to date
(exit 0) or would be built (exit 1); it builds the collection tree, one of the inputs. Docker's build containers run at the lowest CPU weight
(``--cpu-shares 2``): the build yields to a lab run on the same machine. Exit 3: docker does not answer
or the Debian image is missing.
"""
import argparse
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EE_DIR = os.path.join(ROOT, "ee")
BASE_DIR = os.path.join(EE_DIR, "base")
DEFINITION = os.path.join(EE_DIR, "execution-environment-local.yml")
# what the definition reads besides itself (its dependencies), beside it in ee/
EE_FILES = ("requirements.txt", "bindep.txt", "requirements.yml")
COLLECTION_OUT = os.path.join(ROOT, "build", "collection")
COLLECTION = os.path.join(COLLECTION_OUT, "ansible_collections", "testbed", "infra")
CONTEXT = os.path.join(ROOT, "build", "ee-context")
BASE_TAG = "testbed-ee-base:bookworm"
LABEL = "testbed.ee.inputs"
LOCAL_CA = "/usr/local/share/ca-certificates"
CPU_SHARES = "2"


def docker(*args, check=True, capture=True):
    return subprocess.run(["docker", *args], check=check, text=True,
                          stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE if capture else None)


def image(name):
    """The image's id, labels and size, or None when there is no such image here."""
    proc = docker("image", "inspect", name, check=False)
    if proc.returncode != 0:
        return None
    info = json.loads(proc.stdout)[0]
    return {"id": info["Id"], "labels": (info.get("Config") or {}).get("Labels") or {}, "size": info["Size"]}


def tree_files(top):
    """Every file under top, as (path relative to top, absolute path), in a stable order."""
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if not name.endswith(".pyc"):
                path = os.path.join(dirpath, name)
                found.append((os.path.relpath(path, top), path))
    return found


def digest(parts, files):
    """sha256 over the strings in parts and the names, modes and contents of files [(name, path)]."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    for name, path in files:
        h.update(name.encode() + b"\0" + oct(os.stat(path).st_mode & 0o777).encode() + b"\0")
        with open(path, "rb") as handle:
            h.update(hashlib.sha256(handle.read()).digest())
    return h.hexdigest()[:32]


def local_cas():
    if not os.path.isdir(LOCAL_CA):
        return []
    return [(name, path) for name, path in tree_files(LOCAL_CA) if name.endswith(".crt")]


def base_inputs(base_from):
    return digest([base_from["id"]], [("base/" + n, p) for n, p in tree_files(BASE_DIR)]
                  + [("ca/" + n, p) for n, p in local_cas()])


def ee_inputs(base):
    files = [(name, os.path.join(EE_DIR, name)) for name in ("execution-environment-local.yml",) + EE_FILES]
    files += [("collection/" + n, p) for n, p in tree_files(COLLECTION)]
    return digest([base["id"], "ansible-builder " + importlib.metadata.version("ansible-builder")], files)


def build_base(base_from_name, inputs):
    with tempfile.TemporaryDirectory(prefix="testbed-ee-base-") as context:
        shutil.copytree(BASE_DIR, context, dirs_exist_ok=True)
        ca_dir = os.path.join(context, "local-ca")
        os.makedirs(ca_dir)
        for name, path in local_cas():
            os.makedirs(os.path.dirname(os.path.join(ca_dir, name)), exist_ok=True)
            shutil.copy2(path, os.path.join(ca_dir, name))
        docker("build", "-q", "--force-rm", "--cpu-shares", CPU_SHARES, "--build-arg", f"BASE={base_from_name}",
               "--label", f"{LABEL}={inputs}", "-t", BASE_TAG, context, capture=False)


def build_ee(tag, inputs):
    builder = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
    shutil.rmtree(CONTEXT, ignore_errors=True)
    subprocess.run([builder if os.path.exists(builder) else "ansible-builder", "build",
                    "--file", DEFINITION, "--context", CONTEXT, "--output-filename", "Dockerfile",
                    "--container-runtime", "docker", "--tag", tag, "--verbosity", "2",
                    "--extra-build-cli-args", f"--force-rm --cpu-shares {CPU_SHARES} --label {LABEL}={inputs}"],
                   cwd=ROOT, check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default="testbed-ee:local", help="the image's name (default testbed-ee:local)")
    parser.add_argument("--base-from", default="testbed/debian:bookworm",
                        help="the local Debian image the base is built FROM (default testbed/debian:bookworm, "
                             "the lab's: make images)")
    parser.add_argument("--check", action="store_true",
                        help="only say whether the image is up to date (exit 0) or would be built (exit 1)")
    args = parser.parse_args(argv)

    if shutil.which("docker") is None or docker("version", check=False).returncode != 0:
        print("build-ee: docker does not answer (scripts/ensure-dockerd.sh starts it)", file=sys.stderr)
        return 3
    base_from = image(args.base_from)
    if base_from is None:
        print(f"build-ee: no image {args.base_from} here: `make images` builds it (roles/lab_images, "
              "from a debootstrap rootfs)", file=sys.stderr)
        return 3

    started = time.monotonic()
    want_base = base_inputs(base_from)
    base = image(BASE_TAG)
    if base is None or base["labels"].get(LABEL) != want_base:
        if args.check:
            print(f"build-ee: {BASE_TAG} would be built, then {args.tag}")
            return 1
        print(f"build-ee: building {BASE_TAG} from {args.base_from}", flush=True)
        build_base(args.base_from, want_base)
        if base is not None:
            docker("image", "rm", base["id"], check=False)  # the base this one replaces, if nothing uses it
        base = image(BASE_TAG)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-collection.py"), "--out", COLLECTION_OUT,
                    "--no-tarball"], check=True, stdout=subprocess.DEVNULL)
    want = ee_inputs(base)
    have = image(args.tag)
    if have is not None and have["labels"].get(LABEL) == want:
        print(f"build-ee: {args.tag} is up to date ({LABEL}={want}, {have['size'] / 1e6:.0f} MB)")
        return 0
    if args.check:
        print(f"build-ee: {args.tag} would be built ({LABEL}={want})")
        return 1
    print(f"build-ee: building {args.tag} ({LABEL}={want})", flush=True)
    build_ee(args.tag, want)
    built = image(args.tag)
    if have is not None and have["id"] != built["id"]:
        docker("image", "rm", have["id"], check=False)  # the image this one replaces, now untagged
    # Docker's legacy builder keeps each stage (galaxy, builder) as an untagged image; they carry the
    # base's label, which no other image here has: remove them (a rebuild follows a change of the
    # collection, which comes before the pip installs, so they would not be reused anyway).
    stages = docker("image", "ls", "--quiet", "--filter", "dangling=true", "--filter", f"label={LABEL}").stdout.split()
    if stages:
        docker("image", "rm", *sorted(set(stages)), check=False)
    print(f"build-ee: built {args.tag} in {time.monotonic() - started:.0f} s ({built['size'] / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
