"""Behaviour of a host converged with bench_tools."""


def test_httperf_runs(host):
    out = host.run("httperf --version")
    assert out.rc == 0
    assert "httperf-0.9" in out.stdout + out.stderr


def test_iperf3_serves_on_loopback(host):
    # a real 1-second transfer over the container's loopback, parsed as JSON
    host.run("iperf3 -s -1 -B 127.0.0.1 -p 5399 -D")
    out = host.run("iperf3 -J -c 127.0.0.1 -p 5399 -t 1")
    assert out.rc == 0, out.stderr
    import json

    report = json.loads(out.stdout)
    assert "error" not in report
    assert report["end"]["sum_received"]["bytes"] > 0


def test_only_requested_packages(host):
    assert host.package("httperf").is_installed
    assert not host.package("fio").is_installed
