"""A results directory without room for the run is refused before the first point, for real: the worked
example (playbooks/cpu-scaling.yml) with its results on a 4 MiB tmpfs. The lock file is the test's own."""

import os
import subprocess

import playbook_run
import pytest
from playbook_run import why

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs: needs root")


@pytest.fixture
def small_filesystem(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_run_whose_results_do_not_fit_is_refused_before_the_first_point(tmp_path, small_filesystem):
    results = small_filesystem / "results"
    proc = playbook_run.play("playbooks/cpu-scaling.yml", "-e", '{"cpu_scaling_threads": [1]}',
                             "-e", "cpu_scaling_duration_s=1", "-e", "testbed_repetitions=2",
                             "-e", f"testbed_lock_path={tmp_path / 'lock' / 'run.lock'}", results=results)
    said = " ".join(proc.stdout.split())
    assert proc.returncode == 13, why(proc)
    assert (f"Not measuring: the controller: the filesystem at {small_filesystem} has 4 MB free but this run "
            f"writes 34 MB there: the run's 2 points and report") in said, why(proc)
    assert "give the run a results directory elsewhere (-e testbed_results_dir=...)" in said
    assert playbook_run.point_documents(results, "cpu_scaling") == [], "a point was measured"
    assert not (tmp_path / "lock" / "run.lock").exists(), "the run left its lock behind"
