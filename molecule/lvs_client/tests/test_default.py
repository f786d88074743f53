"""Behaviour of a host converged with lvs_client (and of the side effect's load)."""

import json

import pytest


@pytest.fixture
def client(host):
    if host.backend.get_hostname() != "lvs-client-molecule":
        pytest.skip("checks for the client instance")
    return host


def test_httperf_installed(client):
    assert client.package("httperf").is_installed
    out = client.run("httperf --version")
    assert "httperf-0.9" in out.stdout + out.stderr


def test_runner_and_limits(client):
    runner = client.file("/usr/local/bin/lvs-httperf-run")
    assert runner.mode == 0o755
    limits = client.file("/etc/security/limits.d/90-lvs-client.conf").content_string
    assert "soft nofile 65536" in limits


def test_private_work_directory(client):
    parent, workdir = client.file("/var/lib/testbed"), client.file("/var/lib/testbed/lvs-client")
    assert parent.is_directory and parent.mode == 0o755 and parent.user == "root"
    assert workdir.is_directory and not workdir.is_symlink
    assert workdir.mode == 0o700 and workdir.user == "root" and workdir.group == "root"
    assert client.file("/var/lib/testbed/lvs-client/molecule/proc0.txt").mode == 0o600


def test_runner_refuses_a_symlinked_outdir(client):
    # --httperf /bin/echo: nothing is sent even if it were not refused.
    client.run("mkdir -p /tmp/real-outdir && ln -sfn /tmp/real-outdir /tmp/planted-outdir")
    for outdir in ("/tmp/planted-outdir", "/tmp/planted-outdir/point"):
        out = client.run("lvs-httperf-run --server 10.251.9.80 --rate 1 --num-conns 1 --timeout 1 "
                         "--httperf /bin/echo --outdir %s" % outdir)
        assert out.rc != 0
        assert "is a symlink" in out.stderr
    assert client.run("ls -A /tmp/real-outdir").stdout == ""


def test_runner_refuses_bad_split(client):
    out = client.run("lvs-httperf-run --server 10.251.9.80 --rate 10 --num-conns 1 --processes 2")
    assert out.rc != 0
    assert "smaller than the 2 processes" in out.stderr


def test_side_effect_reports_kept(client):
    # The side effect ran 2 processes with --client=0/2 and 1/2 and kept their reports.
    for index in (0, 1):
        report = client.file("/var/lib/testbed/lvs-client/molecule/proc%d.txt" % index).content_string
        assert "--client=%d/2" % index in report
        assert "--num-conns=100" in report
        assert "Total: connections 100 requests 100 replies 100" in report
        assert "Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0" in report


def test_split_over_hosts(client):
    # Host 1 of 2 with 3 processes: global indexes 3..5, remainder spread over the first ones.
    out = client.run("lvs-httperf-run --server 10.251.9.80 --rate 6 --num-conns 8 --hosts 2 "
                     "--host-index 1 --processes 3 --timeout 2 --httperf /bin/echo")
    assert out.rc == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [p["index"] for p in doc["processes"]] == [3, 4, 5]
    assert [p["num_conns"] for p in doc["processes"]] == [1, 1, 1]
    assert [p["rate_per_s"] for p in doc["processes"]] == [1.0, 1.0, 1.0]
    assert all("--client=%d/6" % p["index"] in p["stdout"] for p in doc["processes"])


def test_sampler_logged(client):
    log = client.file("/var/lib/testbed/cpu-sampler/samples.log").content_string.splitlines()
    assert log[0].startswith("# cpus=")
    assert "cgroup=/sys/fs/cgroup/" in log[0]
    samples = [line.split() for line in log[1:]]
    assert len(samples) >= 4
    assert all(s[2] == "cpu" and s[1].isdigit() for s in samples)
    assert not client.file("/var/lib/testbed/cpu-sampler/sampler.pid").exists
