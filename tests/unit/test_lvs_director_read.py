"""roles/lvs_director's lvs-director-read (the timetable's counter read), rendered and run with stand-ins.

The stand-ins for lvs-director-stats, lvs-director-switch and the CPU window command print
their arguments; the script's own order, the .part file and its refusals are what is tested.
The real script on a real director (IPVS in a VM) is run by molecule/lvs_director.
"""
import os
import shlex
import subprocess

import jinja2
import pytest
import yaml

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "lvs_director")


def _render(tmp_path, switch_rc=0):
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        defaults = yaml.safe_load(handle)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")), keep_trailing_newline=True)
    env.filters["comment"] = lambda text: "# " + str(text)
    env.filters["quote"] = lambda text: shlex.quote(str(text))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "lvs-director-stats").write_text("#!/bin/sh\necho '=== ipvsadm-stats'; echo \"read $*\"\n")
    (bindir / "lvs-director-switch").write_text(
        "#!/bin/sh\n" + ("[ \"$1\" = --stamp ] && t=$(date +%s.%N) && printf '=== zeroed-at\\n%s\\n=== switched-at\\n%s\\n"
                         "=== switch-table\\n' \"$t\" \"$t\"; echo \"-A -t 10.250.1.10:80 -s $2\"\n" if switch_rc == 0
                         else "echo 'lvs-director-switch: unknown scheduler' >&2; exit 2\n"))
    window = tmp_path / "window"
    window.write_text("#!/bin/sh\necho \"window $*\"\n")
    for tool in (bindir / "lvs-director-stats", bindir / "lvs-director-switch", window):
        tool.chmod(0o755)
    values = dict(defaults, ansible_managed="managed", lvs_director_bin_dir=str(bindir),
                  lvs_director_cpu_window_command=str(window), lvs_director_cpu_samples="/var/lib/s/samples.log")
    script = tmp_path / "lvs-director-read"
    script.write_text(env.get_template("lvs-director-read.j2").render(**values))
    script.chmod(0o755)
    return script


def test_the_default_paths_are_the_roles_own():
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        defaults = yaml.safe_load(handle)
    with open(os.path.join(ROLE, "tasks", "present.yml"), encoding="utf-8") as handle:
        present = handle.read()
    assert defaults["lvs_director_bin_dir"] == "/usr/local/sbin"
    assert 'dest: "{{ lvs_director_bin_dir }}/lvs-director-read"' in present


def test_reads_zeroes_and_prints_the_cpu_window_into_a_file(tmp_path):
    script = _render(tmp_path)
    # into a directory that is not there yet (a director restarted from its image by a recovery)
    out = tmp_path / "reads" / "p.read"
    subprocess.run([str(script), "--after", "10.000", "--cpu-start", "5.000", "--out", str(out)], check=True, timeout=30)
    assert (tmp_path / "reads").stat().st_mode & 0o777 == 0o700
    assert out.read_text().splitlines() == ["=== ipvsadm-stats", "read --after 10.000 --zero", "=== prev-cpu",
                                            "window -v start=5.000 -v end=14.000 /var/lib/s/samples.log"]
    assert not (tmp_path / "reads" / "p.read.part").exists()


@pytest.mark.parametrize("switch_rc, lines", [
    (0, ["=== switch", "=== zeroed-at", "EPOCH", "=== switched-at", "EPOCH", "=== switch-table",
         "-A -t 10.250.1.10:80 -s wlc"]),
    # a switch that failed says why, and no switched-at: the next segment's first point is not its scheduler's
    (2, ["=== switch", "lvs-director-switch: unknown scheduler"]),
])
def test_switches_the_scheduler_right_after_the_read(tmp_path, switch_rc, lines):
    script = _render(tmp_path, switch_rc)
    out = tmp_path / "p.read"
    subprocess.run([str(script), "--after", "10", "--cpu-start", "5", "--out", str(out), "--switch", "wlc"],
                   check=True, timeout=30)
    got = out.read_text().splitlines()
    # read first, not zeroed by the read: the switch's own -Z zeroes (and says when)
    assert got[:2] == ["=== ipvsadm-stats", "read --after 10"]
    assert got[-2:] == ["=== prev-cpu", "window -v start=5 -v end=14.000 /var/lib/s/samples.log"]
    middle = got[2:-2]
    for name in ("=== zeroed-at", "=== switched-at"):
        if name in middle:
            at = middle.index(name) + 1
            assert float(middle[at]) > 1e9
            middle[at] = "EPOCH"
    assert middle == lines


@pytest.mark.parametrize("args, message", [
    (["--after", "soon", "--cpu-start", "5", "--out", "/x"], "--after must be epoch seconds"),
    (["--after", "10", "--cpu-start", "5", "--out", "p.read"], "--out must be an absolute path"),
    (["--after", "10", "--cpu-start", "5", "--out", "/x", "--switch", "rr;reboot"], "--switch must be a scheduler name"),
    (["--later"], "usage: lvs-director-read"),
])
def test_refuses_what_it_cannot_use(tmp_path, args, message):
    script = _render(tmp_path)
    proc = subprocess.run([str(script)] + args, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
