"""Experiment 2's preflight: a foreign Ceph cluster and refused disks stop the setup hook in one failure.

The node is this host, seen through a private mount namespace (``unshare -m``) whose /etc and
/var/lib are overlays holding a foreign cluster: ``/etc/ceph/ceph.conf`` (another fsid, no testbed
marker) and an OSD data directory of that fsid (a configuration alone is a client's, refused with
another sentence: tests/unit/test_storage_ownership.py). Nothing of the host's own /etc or
/var/lib is changed. The setup hook must stop before anything is installed with
one failure naming the cluster (and the disks the disk check refuses, here paths that do not
exist); the cleanup hook then removes nothing and the configuration stays byte for byte.

The second case is an operator's cluster brought for network access (storage_compare_ceph_existing_conf)
whose mon_host is 127.0.0.1 while the client VM would run on another host (a compute node the
preflight never contacts): refused in the same one failure, before anything is installed.
"""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOK = os.path.join(ROOT, "tests", "integration", "storage_compare_preflight.yml")
FSID = "0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d"

SCRIPT = r"""
set -e
mkdir -p "$WORK/upper" "$WORK/work" "$WORK/lib-upper" "$WORK/lib-work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$WORK/upper,workdir=$WORK/work" /etc
mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$WORK/lib-upper,workdir=$WORK/lib-work" /var/lib
mkdir -p /etc/ceph /var/lib/ceph/osd/ceph-0
printf '[global]\nfsid = %s\nmon_host = 192.0.2.10\n' "$FSID" > /etc/ceph/ceph.conf
printf '%s\n' "$FSID" > /var/lib/ceph/osd/ceph-0/ceph_fsid
exec ansible-playbook -i localhost, -e "ansible_python_interpreter=$PYTHON" "$PLAYBOOK"
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare (mount namespace)")
def test_foreign_cluster_and_bad_disks_stop_the_setup_hook_in_one_failure(tmp_path):
    env = dict(os.environ, WORK=str(tmp_path), FSID=FSID, PYTHON=sys.executable, PLAYBOOK=PLAYBOOK,
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout
    if proc.returncode != 0 and "mount" in proc.stderr and "overlay" not in out:
        pytest.skip("no overlay mount here: " + proc.stderr[-300:])
    assert proc.returncode == 0, out[-6000:] + proc.stderr[-2000:]
    failure = out.split("PREFLIGHT: ", 1)[1].split("\n\n", 1)[0]
    failure = " ".join(failure.split()).replace("''", "'")   # the message as YAML shows it, unquoted
    assert failure.startswith("Preflight of localhost, nothing installed, written or removed: cluster ceph on node "
                              "localhost was not created by the testbed (fsid %s, found in /etc/ceph/ceph.conf, no "
                              "marker /var/lib/testbed/storage_ceph/ceph.json): remove the cluster yourself, or use "
                              "another node. Disk safety check: nothing was written" % FSID), failure
    assert "/dev/disk/by-id/testbed-preflight-none-a (in storage_disks_devices) does not exist" in failure
    assert "items failed" not in failure
    assert "Install the workload tools" not in out
    assert "nothing was removed from localhost" in " ".join(out.split())
    # the host's own /etc never saw the fake configuration
    if os.path.exists("/etc/ceph/ceph.conf"):
        with open("/etc/ceph/ceph.conf", encoding="utf-8") as handle:
            assert FSID not in handle.read()


LOOPBACK_SCRIPT = r"""
set -e
mkdir -p "$WORK/upper" "$WORK/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$WORK/upper,workdir=$WORK/work" /etc
mkdir -p /etc/ceph
printf '[global]\nfsid = %s\nmon host = [v2:127.0.0.1:3300/0,v1:127.0.0.1:6789/0]\n' "$FSID" > /etc/ceph/ops-preflight.conf
printf '[client.ops]\nkey = AQBpreflightNotAKey==\n' > /etc/ceph/ops-preflight.keyring
printf '[storage_nodes]\nlocalhost ansible_connection=local\n[storage_compute_nodes]\ncompute-preflight ansible_host=192.0.2.1\n' > "$WORK/hosts"
exec ansible-playbook -i "$WORK/hosts" -e "ansible_python_interpreter=$PYTHON" \
  -e '{"storage_compare_variants": ["zfs", "ceph"], "storage_compare_zfs_existing_pool": "tank", "storage_compare_workloads": ["fio"], "storage_compare_devices": [],
       "storage_compare_access": "network", "storage_compare_ceph_existing_conf": "/etc/ceph/ops-preflight.conf",
       "storage_compare_ceph_existing_keyring": "/etc/ceph/ops-preflight.keyring",
       "storage_compare_ceph_existing_client": "client.ops", "storage_compare_ceph_existing_pool": "ops",
       "preflight_conf": "/etc/ceph/ops-preflight.conf", "preflight_osd": false}' "$PLAYBOOK"
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare (mount namespace)")
def test_an_operators_loopback_monitors_with_a_separate_compute_node_stop_the_preflight(tmp_path):
    env = dict(os.environ, WORK=str(tmp_path), FSID=FSID, PYTHON=sys.executable, PLAYBOOK=PLAYBOOK,
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", LOOPBACK_SCRIPT], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout
    if proc.returncode != 0 and "mount" in proc.stderr and "overlay" not in out:
        pytest.skip("no overlay mount here: " + proc.stderr[-300:])
    assert proc.returncode == 0, out[-6000:] + proc.stderr[-2000:]
    failure = " ".join(out.split("PREFLIGHT: ", 1)[1].split("\n\n", 1)[0].split())
    assert failure.startswith(
        "Preflight of localhost, nothing installed, written or removed: /etc/ceph/ops-preflight.conf on localhost "
        "gives the monitors as [v2:127.0.0.1:3300/0,v1:127.0.0.1:6789/0] (mon_host), a loopback address that the "
        "client VM on the compute node compute-preflight cannot reach"), failure
    assert "Install the workload tools" not in out
    assert "AQBpreflightNotAKey" not in out + proc.stderr
