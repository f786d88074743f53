"""Behaviour of a host converged with bench_tools (sets lvs_client, cpu, storage, containers)."""

import json

import pytest


def test_httperf_runs(host):
    out = host.run("httperf --version")
    assert out.rc == 0
    assert "httperf-0.9" in out.stdout + out.stderr


def test_iperf3_serves_on_loopback(host):
    # a real 1-second transfer over the container's loopback, parsed as JSON
    host.run("iperf3 -s -1 -B 127.0.0.1 -p 5399 -D")
    out = host.run("iperf3 -J -c 127.0.0.1 -p 5399 -t 1")
    assert out.rc == 0, out.stderr
    report = json.loads(out.stdout)
    assert "error" not in report
    assert report["end"]["sum_received"]["bytes"] > 0


@pytest.mark.parametrize("command", [
    "fio --version", "sysbench --version", "mariadb --version", "lftp --version", "xz --version",
    "stress-ng --version", "sockperf --version", "qperf --version", "nuttcp -V", "ab -V", "ping -V",
])
def test_set_tools_run(host, command):
    assert host.run(command).rc == 0


@pytest.mark.parametrize("package", ["hpcc", "postal", "mariadb-client", "xz-utils"])
def test_storage_and_container_packages(host, package):
    assert host.package(package).is_installed


@pytest.mark.parametrize("package", ["apache2", "haproxy", "ipvsadm"])
def test_only_requested_sets(host, package):
    # lvs_real_server, nfv and lvs_director were not asked for
    assert not host.package(package).is_installed
