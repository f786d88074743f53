"""testbed_workload entry points xz, hpcc, lftp and curl run for real on loopback.

vsftpd serves a scratch directory on 127.0.0.1:<free port> (anonymous, upload
allowed), started and stopped by the fixture; hpcc runs with a tiny
hpccinf.txt (N=500, one process). About 20-40 s on a busy 2-core machine.
"""

import json
import os
import shutil
import socket
import sys

import pytest
from playbook_run import assert_ok, play, start_server

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", LC_ALL="C.UTF-8")
HPCCINF = os.path.join(ROOT, "tests", "fixtures", "hpcc", "hpccinf-n2000-p1.input")

pytestmark = pytest.mark.skipif(not all(shutil.which(tool) for tool in ("xz", "hpcc", "lftp", "vsftpd")),
                                reason="needs xz, hpcc, lftp and vsftpd (apt-get install xz-utils hpcc lftp vsftpd)")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def ftp_server(tmp_path):
    """vsftpd on 127.0.0.1:<free port>, anonymous root tmp_path/ftp with a 4 MiB data.bin; stopped afterwards."""
    port = free_port()
    root = tmp_path / "ftp"
    (root / "incoming").mkdir(parents=True)
    os.chmod(root, 0o755)
    os.chmod(root / "incoming", 0o777)
    (root / "data.bin").write_bytes(bytes(range(256)) * 16384)
    empty = tmp_path / "empty"
    empty.mkdir()
    conf = tmp_path / "vsftpd.conf"
    conf.write_text(f"""listen=YES
listen_ipv6=NO
listen_address=127.0.0.1
listen_port={port}
background=NO
anonymous_enable=YES
local_enable=NO
no_anon_password=YES
anon_root={root}
write_enable=YES
anon_upload_enable=YES
anon_umask=022
pasv_enable=YES
pasv_address=127.0.0.1
secure_chroot_dir={empty}
seccomp_sandbox=NO
xferlog_enable=NO
""")
    os.chmod(conf, 0o600)
    proc = start_server(["vsftpd", str(conf)], port, "vsftpd")
    yield port, root
    proc.terminate()
    proc.wait(timeout=10)


STUDY_TOOLS = all(shutil.which(tool) for tool in ("nuttcp", "netperf", "netserver", "iozone", "prlimit"))


@pytest.fixture()
def netserver():
    """netserver on 127.0.0.1:<free port> in the foreground; stopped afterwards (None without the study tools)."""
    if not STUDY_TOOLS:
        yield None
        return
    port = free_port()
    proc = start_server(["netserver", "-D", "-4", "-L", "127.0.0.1", "-p", str(port)], port, "netserver")
    yield port
    proc.terminate()
    proc.wait(timeout=10)


def test_xz_hpcc_lftp_curl_entry_points(ftp_server, netserver, tmp_path):
    port, root = ftp_server
    work = tmp_path / "work"
    (work / "hpcc").mkdir(parents=True)
    with open(HPCCINF, encoding="utf-8") as handle:
        (work / "hpcc" / "hpccinf.txt").write_text(handle.read().replace("2000         Ns", "500          Ns"))
    # a stale report from an earlier run: the role removes it before hpcc appends
    (work / "hpcc" / "hpccoutf.txt").write_text("stale\n")
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta"]
    (work / "xz-input.bin").write_bytes(b" ".join(words[(i * 7) % 6] + str(i % 997).encode() for i in range(700000)))
    study = ["-e", "cc_study_tools=true", "-e", f"cc_netperf_port={netserver}", "-e", f"cc_nuttcp_port={free_port()}"] \
        if netserver else []
    proc = play("tests/integration/workload_cc_tools.yml", "-e", f"cc_dir={work}", "-e", f"cc_ftp_port={port}",
                *study, env=ENV)
    assert_ok(proc)
    # the background xz was waited for by a shell loop on its job file (no Python module beside the tool)
    wait = proc.stdout.split("Wait without a process beside the tool (a shell loop on its job file), xz", 1)
    assert len(wait) == 2 and "ok: [localhost]" in wait[1].split("TASK [", 1)[0], proc.stdout[-3000:]
    with open(work / "results.json", encoding="utf-8") as handle:
        results = json.load(handle)

    xz = results["xz"]
    assert xz["error"] is None and xz["output"] == "stderr", xz
    # under its deadline (no estimate: the default), then the shell that sends xz's data to /dev/null
    assert xz["argv"][:10] == ["env", "LC_ALL=C", "LANG=C", "timeout", "-k", "3", "3600",
                               "sh", "-c", 'exec "$0" "$@" > /dev/null']
    assert xz["deadline_s"] == 3600 and xz["overran"] is False
    assert xz["stdout"] == ""          # the compressed data went to /dev/null
    assert xz["output_text"] == xz["stderr"] and "xz-input.bin: " in xz["output_text"]
    metrics = xz["parsed"]["metrics"]
    size_mib = os.path.getsize(work / "xz-input.bin") / 1048576.0
    assert metrics["uncompressed_mib"] == pytest.approx(size_mib, abs=0.05)
    assert metrics["threads"] == 2 and 0 < metrics["ratio"] < 1

    hpcc = results["hpcc"]
    assert hpcc["error"] is None and hpcc["output"] == "file", hpcc
    assert hpcc["argv"][3:5] == ["env", f"--chdir={work}/hpcc"]
    assert hpcc["parsed"]["valid"] is True, hpcc["parsed"]["reasons"]
    assert hpcc["parsed"]["metrics"]["hpl_n"] == 500 and hpcc["parsed"]["metrics"]["hpl_gflops"] > 0
    assert hpcc["parsed"]["details"]["runs_in_file"] == 1
    assert "Begin of Summary section." in hpcc["output_text"] and "stale" not in hpcc["output_text"]

    lftp = results["lftp"]
    assert lftp["error"] is None and lftp["output"] == "stdout" and lftp["output_text"] is None, lftp
    assert lftp["argv"][3:10] == ["env", f"--chdir={work}", "timeout", "-k", "3", "60", "lftp"]
    metrics = lftp["parsed"]["metrics"]
    assert (metrics["direction"], metrics["get_bytes"], metrics["put_bytes"]) == ("mixed", 4194304, 4194304)
    assert metrics["get_rate_mib_s"] > 0 and metrics["put_rate_mib_s"] > 0
    assert (root / "incoming" / "put.bin").stat().st_size == 4194304

    curl = results["curl"]
    assert curl["error"] is None, curl
    metrics = curl["parsed"]["metrics"]
    assert (metrics["direction"], metrics["transferred_bytes"], metrics["response_code"]) == ("get", 4194304, 226)
    assert 0 < metrics["first_byte_s"] <= metrics["total_s"]

    # a tool whose output cannot be parsed: no parse result, the error names both the tool's and the parser's words
    missing = results["xz_missing"]
    assert missing["parsed"] is None and missing["rc"] == 1, missing
    assert "missing.bin" in missing["error"] and "->" in missing["error"]

    if not netserver:
        return  # nuttcp, netperf (non-free), iozone3 (non-free) not installed: the studies' tools are not run
    # nuttcp in both directions: a rate and both processes' CPU, the direction the caller's
    for flag, direction in (("-t", "transmit"), ("-r", "receive")):
        nuttcp = results["nuttcp"][flag]
        assert nuttcp["error"] is None, nuttcp
        assert nuttcp["argv"][3:8] == ["timeout", "-k", "3", "30", "nuttcp"] and flag in nuttcp["argv"]
        metrics = nuttcp["parsed"]["metrics"]
        assert metrics["rate_bps"] > 0 and metrics["tx_cpu_pct"] is not None
        assert nuttcp["parsed"]["details"]["direction"] == direction
    netperf = results["netperf"]
    assert netperf["error"] is None, netperf
    metrics = netperf["parsed"]["metrics"]
    assert (metrics["request_bytes"], metrics["response_bytes"]) == (100, 200)
    assert metrics["transactions_per_s"] > 0 and metrics["rtt_p99_us"] >= metrics["rtt_p50_us"] > 0
    iozone = results["iozone"]
    assert iozone["error"] is None, iozone
    assert iozone["parsed"]["metrics"]["write_kib_s"] > 0 and iozone["parsed"]["metrics"]["read_kib_s"] > 0
    wrapped = results["wrapped"]
    assert wrapped["argv"][3:10] == ["timeout", "-k", "3", "3600", "prlimit", "--nofile=3000:", "sysbench"], wrapped["argv"]
    assert wrapped["error"] is None and wrapped["parsed"]["metrics"]["events_per_s"] > 0
