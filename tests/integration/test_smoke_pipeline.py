"""A real, short run of the measurement pipeline on loopback.

nginx serves a fixed page on 127.0.0.1; httperf loads it at two rates; the
httperf_parse module, result_store and the report generator turn that into
JSON documents (validated against the schema), CSV, Markdown and PNG charts.
Also checks the ad-hoc form `ansible localhost -m httperf_parse -a src=...`.
"""

import csv
import json
import os
import socket
import subprocess
import sys

import jsonschema
import pytest
from playbook_run import assert_ok, only_run_dir, play, report_text, run_dirs, start_server, stored_documents

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", LC_ALL="C.UTF-8",
           ANSIBLE_CALLBACK_RESULT_FORMAT="json")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def web_server(tmp_path):
    """nginx on 127.0.0.1:<free port> serving a 1 KiB page, stopped afterwards."""
    port = free_port()
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("x" * 1024)
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"""
daemon off; master_process off; worker_processes 1; pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log;
events {{ worker_connections 512; }}
http {{ access_log off;
  client_body_temp_path {tmp_path}/body; proxy_temp_path {tmp_path}/proxy;
  fastcgi_temp_path {tmp_path}/fcgi; uwsgi_temp_path {tmp_path}/uwsgi; scgi_temp_path {tmp_path}/scgi;
  server {{ listen 127.0.0.1:{port}; root {root}; }} }}
""")
    proc = start_server(["nginx", "-c", str(conf), "-p", str(tmp_path)], port, "nginx")
    yield port
    proc.terminate()
    proc.wait(timeout=10)


def test_pipeline_httperf_to_report(web_server, tmp_path):
    results = tmp_path / "results"
    smoke = ("tests/integration/smoke_httperf.yml", "-e", f"smoke_port={web_server}", "-e", f"smoke_results={results}")
    assert_ok(play(*smoke, env=ENV, timeout=300))

    run_dir = only_run_dir(results, "smoke_httperf")
    schema = jsonschema.Draft202012Validator(
        json.load(open(os.path.join(ROOT, "schemas", "result-point.schema.json"))))
    docs = [d for d in stored_documents(results, "smoke_httperf").values() if d["variant"] == "loopback"]
    assert [d["parameters"]["rate"] for d in docs] == [20, 40]
    for doc in docs:
        schema.validate(doc)
        m = doc["metrics"]
        # every connection answered by the real server; httperf paces at the requested rate, so the achieved
        # rate is never (much) above it, and a loaded machine may fall below it: no lower bound but > 0
        assert m["connections"] == 60 and m["replies"] == 60 and m["status_2xx"] == 60
        assert m["errors_total"] == 0 and m["errors_fd_unavail"] == 0
        assert 0 < m["connection_rate_per_s"] <= 1.1 * doc["parameters"]["rate"]
        assert m["reply_size_total_bytes"] > 1024
        assert doc["units"]["response_time_ms"] == "ms"
        assert doc["environment"]["hosts"] and doc["environment"]["controller"]["ansible_core_version"]
        raw = open(os.path.join(run_dir, doc["raw_files"][0])).read()
        assert raw.startswith("httperf --hog") and "Errors: fd-unavail 0" in raw

    with open(os.path.join(run_dir, "results.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(float(r["rate"])) for r in rows] == [20, 40]
    report = report_text(results, "smoke_httperf")
    assert "### `connection_rate_per_s`" in report
    for chart in ("connection_rate_per_s", "response_time_ms", "net_io_kb_s"):
        with open(os.path.join(run_dir, "charts", chart + ".png"), "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"

    # resumable: a second run finds nothing pending and measures nothing
    again = assert_ok(play(*smoke, env=ENV, timeout=300))
    assert "Run httperf against the loopback server" not in again.stdout
    assert len(run_dirs(results, "smoke_httperf")) == 1


def run_adhoc(args):
    return subprocess.run([os.path.join(BIN, "ansible"), "localhost", "-m"] + args,
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)


def test_adhoc_module_from_repo_root():
    ok = run_adhoc(["httperf_parse", "-a", "src=tests/fixtures/httperf/fd_unavail.txt"])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert '"errors_fd_unavail": 2121' in ok.stdout
    assert '"valid": false' in ok.stdout
    bad = run_adhoc(["httperf_parse", "-a", "src=tests/fixtures/httperf/truncated_normal_rate150.txt"])
    assert bad.returncode != 0
    assert "httperf output tests/fixtures/httperf/truncated_normal_rate150.txt" in bad.stdout
    assert "truncated" in bad.stdout
