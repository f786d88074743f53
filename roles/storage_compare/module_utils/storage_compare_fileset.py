# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deterministic file sets, sha256 manifests and rebuild progress curves (experiment 2).

Pure logic for ``roles/storage_compare/library/storage_fileset.py`` and
``storage_rebuild_poll.py`` (pytest imports it without a host):

* :func:`plan_files`: the names and sizes of a file set from a seed, a file
  count and a total size (sizes vary like the study's ISO files, sum exact);
* :func:`file_chunks` / :func:`write_fileset`: the bytes of each file, a pure
  function of (seed, name, size) - the same file set on every system and run;
* :func:`build_manifest` / :func:`verify_manifest`: sha256 per file; a
  verification lists every mismatch file by file, every missing and every
  extra file;
* :func:`progress_curve`: the polled status samples of a rebuild as
  ``[[t_s, fraction]]``, the time until the system reported itself whole.
"""

from __future__ import absolute_import, division, print_function

import hashlib
import json
import os
import random

MARKER = ".testbed-fileset.json"
CHUNK = 1 << 20


class FilesetError(ValueError):
    """Bad input to a file-set function (the message names the value)."""


def _int(value, what, minimum):
    if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
        raise FilesetError("%s must be an integer >= %d, got %r" % (what, minimum, value))
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise FilesetError("%s must be an integer >= %d, got %r" % (what, minimum, value)) from None
    if number < minimum:
        raise FilesetError("%s must be an integer >= %d, got %r" % (what, minimum, value))
    return number


def mb_to_bytes(mb):
    """Bytes of ``mb`` MB (10^6 bytes, the study's GB are 10^9)."""
    return _int(mb, "MB", 0) * 1000000


def files_for(total_bytes, file_bytes):
    """How many files of about ``file_bytes`` make ``total_bytes`` (at least one)."""
    total, size = _int(total_bytes, "total_bytes", 1), _int(file_bytes, "file_bytes", 1)
    return max(1, -(-total // size))


def plan_files(seed, count, total_bytes, prefix="file"):
    """``[{name, size}]``: ``count`` files whose sizes sum to exactly ``total_bytes``.

    Sizes are drawn from ``random.Random(seed)`` between 0.5 and 1.5 times the
    mean, so a file set is the same for a seed everywhere (Python's string and
    integer seeding is stable across platforms and versions >= 3.2).
    """
    count = _int(count, "count", 1)
    total = _int(total_bytes, "total_bytes", count)
    rng = random.Random("testbed-fileset:%s" % (seed,))
    weights = [0.5 + rng.random() for _file in range(count)]
    scale = float(total) / sum(weights)
    sizes = [max(1, int(w * scale)) for w in weights]
    # the rounding remainder goes to the largest file, so the sum is exact
    sizes[sizes.index(max(sizes))] += total - sum(sizes)
    if min(sizes) < 1:
        raise FilesetError("total_bytes %d is too small for %d files" % (total, count))
    width = len(str(count))
    return [{"name": "%s-%0*d.bin" % (prefix, width, n + 1), "size": size} for n, size in enumerate(sizes)]


def file_chunks(seed, name, size, chunk=CHUNK):
    """Yield the bytes of one file of the set (pseudo-random, incompressible, deterministic)."""
    rng = random.Random("testbed-file:%s:%s" % (seed, name))
    left = int(size)
    while left > 0:
        step = min(chunk, left)
        yield rng.getrandbits(step * 8).to_bytes(step, "little")
        left -= step


def _plan_document(seed, files):
    return {"seed": str(seed), "files": files}


def write_fileset(directory, seed, files, fsync=True):
    """Write the planned files into ``directory``; return ``{changed, bytes, files}``.

    A directory whose marker names the same plan and whose files have the
    planned sizes is left alone (``changed`` false); otherwise every file is
    written again and files not in the plan are removed.
    """
    plan = _plan_document(seed, files)
    marker = os.path.join(directory, MARKER)
    if os.path.isdir(directory) and os.path.exists(marker):
        try:
            with open(marker) as handle:
                same = json.load(handle) == plan
        except ValueError:
            same = False
        if same and all(os.path.isfile(os.path.join(directory, f["name"]))
                        and os.path.getsize(os.path.join(directory, f["name"])) == f["size"] for f in files):
            return {"changed": False, "bytes": sum(f["size"] for f in files), "files": len(files)}
    if not os.path.isdir(directory):
        os.makedirs(directory)
    if os.path.exists(marker):
        os.unlink(marker)
    names = set(f["name"] for f in files)
    for entry in os.listdir(directory):
        path = os.path.join(directory, entry)
        if entry not in names and os.path.isfile(path):
            os.unlink(path)
    written = 0
    for item in files:
        path = os.path.join(directory, item["name"])
        with open(path, "wb") as handle:
            for block in file_chunks(seed, item["name"], item["size"]):
                handle.write(block)
                written += len(block)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
    with open(marker, "w") as handle:
        json.dump(plan, handle, sort_keys=True)
    return {"changed": True, "bytes": written, "files": len(files)}


def sha256_file(path, chunk=CHUNK):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while True:
            block = handle.read(chunk)
            if not block:
                break
            digest.update(block)
    return digest.hexdigest()


def build_manifest(directory, ignore=(MARKER,)):
    """``{relative path: {sha256, size}}`` of every regular file under ``directory``."""
    if not os.path.isdir(directory):
        raise FilesetError("%s is not a directory" % directory)
    out = {}
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, directory)
            if rel in ignore or not os.path.isfile(path) or os.path.islink(path):
                continue
            out[rel] = {"sha256": sha256_file(path), "size": os.path.getsize(path)}
    return out


def verify_manifest(expected, actual):
    """Compare two manifests: ``{valid, checked, bytes, mismatches, missing, extra, reasons}``.

    ``mismatches`` lists every file whose content differs, file by file
    (``{path, expected_sha256, actual_sha256, expected_size, actual_size}``);
    ``missing`` the files of ``expected`` that are gone, ``extra`` the files
    that appeared. Valid only when all three are empty.
    """
    for what, value in (("expected", expected), ("actual", actual)):
        if not isinstance(value, dict):
            raise FilesetError("%s must be a manifest {path: {sha256, size}}, got %r" % (what, type(value).__name__))
    if not expected:
        raise FilesetError("the expected manifest is empty: nothing to verify")
    mismatches, missing = [], []
    for path in sorted(expected):
        want = expected[path]
        if path not in actual:
            missing.append(path)
            continue
        got = actual[path]
        if got.get("sha256") != want.get("sha256") or got.get("size") != want.get("size"):
            mismatches.append({"path": path, "expected_sha256": want.get("sha256"), "actual_sha256": got.get("sha256"),
                               "expected_size": want.get("size"), "actual_size": got.get("size")})
    extra = sorted(p for p in actual if p not in expected)
    reasons = ["%s: content differs (sha256 %s, expected %s)" % (m["path"], m["actual_sha256"], m["expected_sha256"])
               for m in mismatches]
    reasons += ["%s: missing" % p for p in missing]
    reasons += ["%s: not in the manifest" % p for p in extra]
    return {"valid": not reasons, "checked": len(expected) - len(missing), "expected_files": len(expected),
            "bytes": sum(int(v.get("size") or 0) for p, v in expected.items() if p in actual),
            "mismatches": mismatches, "missing": missing, "extra": extra, "reasons": reasons}


def _round(value, digits=3):
    return None if value is None else round(float(value), digits)


def progress_curve(samples, max_points=200, rescale=False):
    """A rebuild's progress curve from polled status samples.

    ``samples``: ``[{t_s, whole, fraction}]`` in poll order (``t_s`` seconds
    since the disk was put back, ``fraction`` 0..1 or None when the status
    gave none). Returns ``{curve: [[t_s, fraction]], rebuild_s, whole,
    observed_degraded, samples}``: ``rebuild_s`` is the first ``t_s`` at which
    the system reported itself whole after its last degraded sample (None when
    it did not end whole), the curve is
    thinned evenly to at most ``max_points`` points (first and last kept) and a
    whole sample counts as fraction 1.

    ``rescale``: the fraction of the first degraded sample counts as 0 (Ceph's
    progress starts where the loss left it: 0.5 with size 2 and one of two
    OSDs gone), ``(f - f0) / (1 - f0)``; whole samples before it (the old map,
    before the system noticed the loss) become None; no degraded sample at all
    leaves the curve as it is.
    ``curve_raw`` keeps the fractions as the system reported them.
    """
    if not isinstance(samples, (list, tuple)):
        raise FilesetError("samples must be a list of {t_s, whole, fraction}, got %r" % type(samples).__name__)
    points, rebuild_s, degraded, last_t = [], None, False, None
    for number, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("t_s"), (int, float)):
            raise FilesetError("samples[%d] must be {t_s, whole, fraction}, got %r" % (number, sample))
        t = float(sample["t_s"])
        if last_t is not None and t < last_t:
            # pylint: disable-next=bad-string-format-type
            raise FilesetError("samples[%d]: t_s %.3f goes back in time (previous %.3f)" % (number, t, last_t))
        last_t = t
        whole = bool(sample.get("whole"))
        fraction = 1.0 if whole else sample.get("fraction")
        if fraction is not None:
            fraction = min(1.0, max(0.0, float(fraction)))
        if not whole:
            degraded = True
        points.append([_round(t), _round(fraction, 4)])
        if whole and rebuild_s is None:
            rebuild_s = t
        elif not whole:
            # a whole status before the loss showed up was the old map: the rebuild ends at a later one
            rebuild_s = None
    if len(points) > max_points > 1:
        step = (len(points) - 1) / float(max_points - 1)
        points = [points[int(round(i * step))] for i in range(max_points)]
    raw = [list(p) for p in points]
    if rescale:
        # the base is the first degraded sample: whole samples before it still showed the old map
        start = next((n for n, (sample, point) in enumerate(zip(samples, points))
                      if not sample.get("whole") and point[1] is not None), None) if len(points) == len(samples) else None
        if start is None and len(points) != len(samples):
            start = next((n for n, p in enumerate(points) if p[1] is not None and p[1] < 1.0), None)
        first = points[start][1] if start is not None else None
        for number, point in enumerate(points):
            if first is None or point[1] is None:
                continue
            if number < start:
                point[1] = None
            else:
                point[1] = 1.0 if first >= 1.0 else _round(max(0.0, min(1.0, (point[1] - first) / (1.0 - first))), 4)
    return {"curve": points, "curve_raw": raw, "rebuild_s": _round(rebuild_s), "whole": rebuild_s is not None,
            "observed_degraded": degraded, "samples": len(samples)}


def throughput_mb_s(nbytes, seconds):
    """MB/s (10^6 bytes per second) of ``nbytes`` moved in ``seconds``; None when either is missing or zero."""
    if nbytes is None or seconds is None or isinstance(nbytes, bool) or isinstance(seconds, bool):
        return None
    nbytes, seconds = float(nbytes), float(seconds)
    if nbytes < 0 or seconds < 0:
        raise FilesetError("bytes and seconds must not be negative, got %r and %r" % (nbytes, seconds))
    if seconds == 0 or nbytes == 0:
        return None
    return nbytes / seconds / 1e6


def _lookup(parsed, name):
    """A value of a parse result: top level, ``details`` or ``metrics`` (the parsers keep it in one of them)."""
    for where in (parsed, parsed.get("details") or {}, parsed.get("metrics") or {}):
        if isinstance(where, dict) and name in where:
            return where[name]
    return None


def status_sample(parsed, t_s):
    """One poll of a storage system's own status as ``{t_s, whole, fraction}``.

    ``parsed`` is the result of the project's status parser (``zpool_status_parse``,
    ``ceph_status_parse``): ``whole`` (full redundancy back) and
    ``progress_fraction`` (0..1). A status without ``whole`` raises.
    """
    if not isinstance(parsed, dict):
        raise FilesetError("parsed must be a parser result, got %r" % type(parsed).__name__)
    whole = _lookup(parsed, "whole")
    if not isinstance(whole, bool):
        raise FilesetError("the status parse gives no boolean 'whole' (got %r)" % (whole,))
    fraction = _lookup(parsed, "progress_fraction")
    return {"t_s": _round(t_s), "whole": whole,
            "fraction": None if fraction is None or isinstance(fraction, bool) else float(fraction)}
