#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Poll a storage system's own status until it reports itself whole (experiment 2's rebuild)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: storage_rebuild_poll
short_description: Time a ZFS resilver or a Ceph recovery by polling the system's own status
description:
  - Runs the system's status command every I(interval_s) seconds on the storage node - C(zpool status -p POOL)
    for ZFS, C(ceph status -f json) for Ceph - parses each output with the project's parser
    (module_utils C(testbed_parse_zpool) / C(testbed_parse_ceph), the code of M(zpool_status_parse) and
    M(ceph_status_parse)) and stops at the first output whose C(whole) is true (ZFS - pool and every vdev
    ONLINE, no resilver running, no data errors; Ceph - every PG active+clean, nothing degraded or misplaced).
  - Returns the progress curve C([[t_s, fraction]]) (seconds since I(since), the parser's C(progress_fraction))
    and C(rebuild_s), the time from I(since) to the first whole status. Runs on the node, so a poll costs one
    command, not one Ansible task.
  - A status that cannot be parsed fails the module with the parser's message; reaching I(timeout_s) does not
    (RV(whole) false says so).
version_added: "1.0.0"
author: Testbed contributors
options:
  system:
    description: The storage system.
    type: str
    choices: [zfs, ceph]
    required: true
  pool:
    description: The ZFS pool (I(system=zfs)).
    type: str
    default: tank
  cluster:
    description: The Ceph cluster name (I(system=ceph)).
    type: str
    default: ceph
  since:
    description: Epoch seconds (the node's clock) the curve's time axis starts at - when the disk was put back.
      Default the module's start (or I(since_file)'s mtime).
    type: float
  since_file:
    description:
      - A path on the node whose modification time is the moment the disk was put back (the builder roles'
        C(storage_zfs_replace_mark_file) / C(storage_ceph_replace_mark_file) touch it just before the put-back).
      - The module is then started B(before) the loss, as an async task - it waits for the file (checking every
        50 ms, running no status command meanwhile) and polls from the moment it appears, so no start-up cost of the
        module falls into the rebuild (a ZFS resilver of a small pool ends in a second or two).
      - Waiting longer than I(since_wait_s) fails the module.
    type: path
  since_wait_s:
    description: Seconds to wait for I(since_file) before failing (the failure and the replacement happen meanwhile).
    type: float
    default: 1800
  done_file:
    description:
      - A path on the node touched when the module ends, whether it succeeds or fails. Run as an async task, the
        playbook waits for it with M(ansible.builtin.wait_for) - one process sleeping on the node - instead of
        polling the job with M(ansible.builtin.async_status) every few seconds, which would start a Python process on
        the node each time and take CPU from the rebuild being timed (seconds each under TCG).
    type: path
  interval_s:
    description: Seconds between two polls.
    type: float
    default: 1.0
  timeout_s:
    description: Give up after this many seconds since I(since).
    type: float
    default: 3600
  settle_s:
    description:
      - A whole status seen before the system ever reported itself degraded ends the poll only once this many seconds
        have passed since I(since) (Ceph needs a moment to notice a recreated OSD; the status may still show the old
        clean map). 0 accepts the first whole status.
    type: float
    default: 0
  max_points:
    description: The returned curve is thinned evenly to at most this many points.
    type: int
    default: 200
  proc_record:
    description:
      - A process record file (C(<dir>/<name>.json), module_utils C(testbed_procs)) the module writes for its own
        process when it starts and removes when it ends; M(testbed_procs) I(state=stopped) in a later run's setup or
        recover hook stops a poller an interrupted run left (it would otherwise wait up to I(since_wait_s) +
        I(timeout_s)).
    type: path
notes:
  - Check mode is not supported (the module only reads, but it takes as long as the rebuild).
seealso:
  - module: storage_fileset
"""

EXAMPLES = r"""
- name: Start the rebuild timer before the disk is taken out
  storage_rebuild_poll:
    system: zfs
    pool: tank
    since_file: /root/.storage-compare/rebuild.back
  async: 3700
  poll: 0
  register: rebuild_job

- name: Time the resilver after the disk was replaced
  storage_rebuild_poll:
    system: zfs
    pool: tank
    since: "{{ replaced_at.stdout | float }}"
    interval_s: 1
    timeout_s: 1800
  register: rebuild
"""

RETURN = r"""
rebuild_s:
  description: Seconds from I(since) to the first whole status (null when it never came).
  returned: always
  type: float
  sample: 41.2
whole:
  description: The system reported itself whole before I(timeout_s).
  returned: always
  type: bool
  sample: true
observed_degraded:
  description: At least one poll saw the system not whole.
  returned: always
  type: bool
  sample: true
curve:
  description:
    - The progress curve C([[t_s, fraction]]), fraction 0..1 of the rebuild done. ZFS - the resilver's percentage / 100.
      Ceph - the share of object copies in place, rescaled so that the first poll is 0 (it starts where the loss left it).
  returned: always
  type: list
  elements: list
  sample: [[0.8, 0.0], [1.9, 0.31], [3.0, 1.0]]
curve_raw:
  description: The fractions as the parser reported them (Ceph - 1 - degraded - misplaced ratios).
  returned: always
  type: list
  elements: list
  sample: [[0.8, 0.5], [1.9, 0.66], [3.0, 1.0]]
samples:
  description: Number of polls.
  returned: always
  type: int
  sample: 3
first_status:
  description: The first poll's raw output.
  returned: always
  type: str
  sample: "  pool: tank ..."
last_status:
  description: The last poll's raw output.
  returned: always
  type: str
  sample: "  pool: tank ..."
last_parsed:
  description: The parser's result of the last poll.
  returned: always
  type: dict
  sample: {}
since:
  description: The epoch seconds (the node's clock) the curve starts at.
  returned: always
  type: float
  sample: 1763923801.25
reported_s:
  description:
    - The system's own figure for the rebuild, when it gives one - ZFS's finished resilver line
      (C(resilvered X in HH:MM:SS)), whole seconds. null for Ceph and when the last status has none.
  returned: always
  type: float
  sample: 3
command:
  description: The status command.
  returned: always
  type: list
  elements: str
  sample: [zpool, status, -p, tank]
"""

import os  # noqa: E402
import time  # noqa: E402 (Ansible modules import after their documentation)

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.storage_compare_fileset import FilesetError, progress_curve, status_sample  # noqa: E402
from ansible.module_utils.testbed_parse import ParseError  # noqa: E402
from ansible.module_utils.testbed_procs import ProcsError, forget_self, record_self  # noqa: E402

# Each system's parser; a missing one fails only a poll of that system.
try:
    from ansible.module_utils.testbed_parse_ceph import parse as parse_ceph  # noqa: E402
except ImportError:  # pragma: no cover - only when the parser is not installed
    parse_ceph = None
try:
    from ansible.module_utils.testbed_parse_zpool import parse as parse_zpool  # noqa: E402
except ImportError:  # pragma: no cover - only when the parser is not installed
    parse_zpool = None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            system=dict(type="str", required=True, choices=["zfs", "ceph"]),
            pool=dict(type="str", default="tank"),
            cluster=dict(type="str", default="ceph"),
            since=dict(type="float"),
            since_file=dict(type="path"),
            since_wait_s=dict(type="float", default=1800.0),
            done_file=dict(type="path"),
            interval_s=dict(type="float", default=1.0),
            timeout_s=dict(type="float", default=3600.0),
            settle_s=dict(type="float", default=0.0),
            max_points=dict(type="int", default=200),
            proc_record=dict(type="path"),
        ),
        supports_check_mode=False,
    )
    record = module.params["proc_record"]
    try:
        if record:
            try:
                record_self(record)
            except (ProcsError, OSError) as exc:
                module.fail_json(msg="storage_rebuild_poll: cannot record its process in %s: %s" % (record, exc))
        poll(module)
    finally:  # exit_json and fail_json leave through SystemExit: the mark is written either way
        if record:
            forget_self(record)
        if module.params["done_file"]:
            with open(module.params["done_file"], "w"):
                pass


def poll(module):
    p = module.params
    since = p["since"]
    if p["since_file"]:
        since = wait_for_mark(module, p["since_file"], p["since_wait_s"])
    if since is None:
        since = time.time()
    if p["system"] == "zfs":
        command, parse = ["zpool", "status", "-p", p["pool"]], parse_zpool
    else:
        command, parse = ["ceph", "--cluster", p["cluster"], "status", "-f", "json"], parse_ceph
    if parse is None:
        module.fail_json(msg="the %s status parser (module_utils testbed_parse_%s) is not installed"
                         % (p["system"], "zpool" if p["system"] == "zfs" else "ceph"))
    samples, first, last, parsed, degraded = [], None, None, None, False
    env = {"LC_ALL": "C", "LANG": "C"}
    while True:
        t = time.time() - since
        rc, out, err = module.run_command(command, environ_update=env)
        if rc != 0 and "-p" in command and "invalid option 'p'" in (err or out):
            # ZFS on Linux 0.7 (the study's 0.7.8) has no `zpool status -p`: its sizes are read as printed
            command = [c for c in command if c != "-p"]
            rc, out, err = module.run_command(command, environ_update=env)
        if rc != 0:
            module.fail_json(msg="%s failed (rc %d): %s" % (" ".join(command), rc, (err or out).strip()[:500]),
                             samples=len(samples))
        try:
            parsed = parse(out, " ".join(command))
            sample = status_sample(parsed, t)
        except (FilesetError, ParseError, ValueError) as exc:
            module.fail_json(msg="%s: %s" % (" ".join(command), exc), status=out[:4000], samples=len(samples))
        first = out if first is None else first
        last = out
        samples.append(sample)
        degraded = degraded or not sample["whole"]
        if sample["whole"] and (degraded or t >= p["settle_s"]):
            break
        if t >= p["timeout_s"]:
            break
        time.sleep(max(0.0, p["interval_s"] - (time.time() - since - t)))
    # Ceph's fraction starts where the loss left it (0.5 with one of two OSDs gone): rescaled to start at 0.
    result = progress_curve(samples, max_points=p["max_points"], rescale=p["system"] == "ceph")
    reported = None
    scan = (parsed.get("details") or {}).get("scan") if isinstance(parsed, dict) else None
    if p["system"] == "zfs" and isinstance(scan, dict) and scan.get("function") == "resilver" \
            and scan.get("state") == "finished":
        reported = scan.get("duration_s")
    module.exit_json(changed=False, command=command, first_status=first, last_status=last, last_parsed=parsed,
                     since=since, reported_s=reported, **result)


def wait_for_mark(module, path, wait_s):
    """The mtime of ``path`` once it exists; fails the module after ``wait_s`` seconds."""
    start = time.time()
    while True:
        try:
            return os.stat(path).st_mtime
        except OSError:
            pass
        if time.time() - start >= wait_s:
            module.fail_json(msg="since_file %s did not appear within %.0f s (the disk was never put back?)"
                             % (path, wait_s))
        time.sleep(0.05)


if __name__ == "__main__":
    main()
