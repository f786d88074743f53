#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a deterministic file set, build or verify its sha256 manifest (experiment 2)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: storage_fileset
short_description: Deterministic file sets and sha256 manifests for the storage comparison
description:
  - C(state=present) writes I(count) files whose sizes sum to exactly I(total_bytes) into I(path); names,
    sizes and contents are a pure function of I(seed), so every system and every run gets the same bytes
    (incompressible pseudo-random data). A directory that already holds that file set (its marker file names
    the same plan and every size matches) is left alone.
  - C(state=manifest) reads every regular file under I(path) and returns (and with I(dest) writes) its
    sha256 manifest.
  - C(state=verify) reads the files again and compares them with the manifest in I(manifest) (a file written by
    C(state=manifest)) - every file whose content differs is listed file by file, with the missing and the extra
    files. The task does not fail on a mismatch; RV(valid) says whether the data survived.
  - The logic is in the role's module_utils C(storage_compare_fileset) (unit-tested).
version_added: "1.0.0"
author: Testbed contributors
options:
  path:
    description: The file set's directory.
    type: path
    required: true
  state:
    description: C(present) writes the file set, C(manifest) builds the manifest, C(verify) checks it.
    type: str
    choices: [present, manifest, verify]
    default: present
  seed:
    description: The seed of names, sizes and contents (C(state=present)).
    type: str
    default: testbed
  count:
    description: Number of files (C(state=present)); default 1, or enough files of I(file_mb) for the total.
    type: int
  file_mb:
    description: About this many MB (10^6 bytes) per file instead of I(count) (the count is the total over it, rounded up; sizes vary around the mean).
    type: int
  total_bytes:
    description: Total size of the file set in bytes (C(state=present)); at least I(count).
    type: int
  total_mb:
    description: Total size in MB (10^6 bytes), instead of I(total_bytes).
    type: int
  prefix:
    description: File name prefix (C(<prefix>-<n>.bin)).
    type: str
    default: file
  fsync:
    description: fsync every file after writing it (C(state=present)).
    type: bool
    default: true
  dest:
    description: Write the manifest here as JSON (C(state=manifest)); outside I(path).
    type: path
  manifest:
    description: The manifest file to verify against (C(state=verify)).
    type: path
  proc_record:
    description:
      - C(state=present) - a process record file (C(<dir>/<name>.json), module_utils C(testbed_procs)) written for
        the module's own process while it writes, removed when it is done; M(testbed_procs) I(state=stopped) in a
        later run's setup or recover hook stops a writer an interrupted run left.
    type: path
notes:
  - Check mode is not supported for C(state=present); C(manifest) and C(verify) only read.
seealso:
  - module: fio_parse
"""

EXAMPLES = r"""
- name: Write the copy test's source file set (8 files, 128 MiB)
  storage_fileset:
    path: /var/tmp/testbed-storage/source
    seed: copy
    count: 8
    total_bytes: 134217728

- name: Build the manifest before the failure
  storage_fileset:
    path: /mnt/testbed/rebuild
    state: manifest
    dest: /var/tmp/testbed-storage/rebuild.manifest.json

- name: Verify it after the rebuild
  storage_fileset:
    path: /mnt/testbed/rebuild
    state: verify
    manifest: /var/tmp/testbed-storage/rebuild.manifest.json
  register: integrity
"""

RETURN = r"""
bytes:
  description: Bytes written (present), read (manifest) or verified (verify).
  returned: always
  type: int
  sample: 134217728
files:
  description: The planned file list C([{name, size}]) (present) or the number of files in the manifest.
  returned: always
  type: raw
  sample: 8
manifest:
  description: The manifest, C(path) -> C({sha256, size}) (state manifest).
  returned: when state is manifest
  type: dict
  sample: {"file-1.bin": {"sha256": "9f86d0...", "size": 16777216}}
valid:
  description: Every file of the manifest is there with its content (state verify).
  returned: when state is verify
  type: bool
  sample: true
mismatches:
  description: Files whose content or size differs, file by file, each with path, expected_sha256, actual_sha256, expected_size and actual_size.
  returned: when state is verify
  type: list
  elements: dict
  sample: []
missing:
  description: Files of the manifest that are gone.
  returned: when state is verify
  type: list
  elements: str
  sample: []
extra:
  description: Files that are not in the manifest.
  returned: when state is verify
  type: list
  elements: str
  sample: []
reasons:
  description: One sentence per problem found (state verify).
  returned: when state is verify
  type: list
  elements: str
  sample: []
duration_s:
  description: Seconds the work took.
  returned: always
  type: float
  sample: 3.2
"""

import json  # noqa: E402 (Ansible modules import after their documentation)
import os  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.storage_compare_fileset import (  # noqa: E402
    FilesetError,
    build_manifest,
    files_for,
    mb_to_bytes,
    plan_files,
    verify_manifest,
    write_fileset,
)
from ansible.module_utils.testbed_procs import ProcsError, forget_self, record_self  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            state=dict(type="str", default="present", choices=["present", "manifest", "verify"]),
            seed=dict(type="str", default="testbed"),
            count=dict(type="int"),
            file_mb=dict(type="int"),
            total_bytes=dict(type="int"),
            total_mb=dict(type="int"),
            prefix=dict(type="str", default="file"),
            fsync=dict(type="bool", default=True),
            dest=dict(type="path"),
            manifest=dict(type="path"),
            proc_record=dict(type="path"),
        ),
        required_if=[("state", "present", ["total_bytes", "total_mb"], True), ("state", "verify", ["manifest"])],
        mutually_exclusive=[("total_bytes", "total_mb"), ("count", "file_mb")],
        supports_check_mode=True,
    )
    p = module.params
    started = time.time()
    try:
        if p["state"] == "present":
            total = p["total_bytes"] if p["total_bytes"] is not None else mb_to_bytes(p["total_mb"])
            count = p["count"] if p["count"] is not None else (
                files_for(total, mb_to_bytes(p["file_mb"])) if p["file_mb"] is not None else 1)
            files = plan_files(p["seed"], count, total, p["prefix"])
            if module.check_mode:
                module.exit_json(changed=True, bytes=0, files=files, duration_s=0.0)
            if p["proc_record"]:
                record_self(p["proc_record"])
            try:
                done = write_fileset(p["path"], p["seed"], files, fsync=p["fsync"])
            finally:
                if p["proc_record"]:
                    forget_self(p["proc_record"])
            module.exit_json(changed=done["changed"], bytes=done["bytes"] if done["changed"] else 0, files=files,
                             duration_s=round(time.time() - started, 3))
        if p["state"] == "manifest":
            manifest = build_manifest(p["path"])
            changed = False
            if p["dest"] and not module.check_mode:
                tmp = p["dest"] + ".tmp"
                with open(tmp, "w") as handle:
                    json.dump(manifest, handle, sort_keys=True, indent=1)
                os.rename(tmp, p["dest"])
                changed = True
            module.exit_json(changed=changed, manifest=manifest, files=len(manifest),
                             bytes=sum(v["size"] for v in manifest.values()), duration_s=round(time.time() - started, 3))
        with open(p["manifest"]) as handle:
            expected = json.load(handle)
        result = verify_manifest(expected, build_manifest(p["path"]))
        module.exit_json(changed=False, files=result["expected_files"], duration_s=round(time.time() - started, 3),
                         **{k: result[k] for k in ("valid", "bytes", "mismatches", "missing", "extra", "reasons", "checked")})
    except (FilesetError, ProcsError, OSError, ValueError) as exc:
        module.fail_json(msg="storage_fileset (%s, %s): %s" % (p["state"], p["path"], exc))


if __name__ == "__main__":
    main()
