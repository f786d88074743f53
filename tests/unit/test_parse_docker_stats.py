"""docker stats parser and docker_stats_parse module, on real captures (tests/fixtures/docker_stats).

The fixtures come from two containers of a locally imported busybox image: tbfx-busy (``yes``,
--cpus 0.5, --memory 64m) and tbfx-idle (``sleep``), read by the 28.2 and the 20.10 docker CLIs.
"""
import json

import docker_stats_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_docker_stats import FIELDS, parse, sanitize
from conftest import fixture_path, read_fixture
from helpers import run_module

KIB, MIB, GIB = 1024, 1024 ** 2, 1024 ** 3


def _parse(name, **options):
    return parse(read_fixture("docker_stats", name), source=name, **options)


def _line(**values):
    base = {"BlockIO": "0B / 0B", "CPUPerc": "1.00%", "Container": "c1", "ID": "0123456789ab",
            "MemPerc": "0.10%", "MemUsage": "1MiB / 1GiB", "Name": "c1", "NetIO": "0B / 0B", "PIDs": "1"}
    base.update(values)
    return json.dumps(base)


@pytest.mark.parametrize("name, busy_cpu, busy_rx, idle_rx", [
    ("cli28_format_json.txt", 49.67, 806, 586),
    ("cli28_format_json_template.txt", 52.28, 806, 586),
    ("cli20_format_json_template.txt", 51.61, 848, 628),
])
def test_two_containers(name, busy_cpu, busy_rx, idle_rx):
    result = _parse(name)
    m = result["metrics"]
    assert result["valid"] is True and result["warnings"] == []
    assert m["containers"] == 2
    assert m["tbfx_busy_cpu_pct"] == busy_cpu
    assert m["tbfx_busy_mem_usage_bytes"] == 572 * KIB
    assert m["tbfx_busy_mem_limit_bytes"] == 64 * MIB
    assert m["tbfx_busy_mem_pct"] == 0.87
    assert m["tbfx_busy_net_rx_bytes"] == busy_rx and m["tbfx_busy_net_tx_bytes"] == 0
    assert m["tbfx_busy_block_read_bytes"] == 0 and m["tbfx_busy_block_write_bytes"] == 0
    assert m["tbfx_busy_pids"] == 3
    assert m["tbfx_idle_cpu_pct"] == 0.0
    assert m["tbfx_idle_mem_usage_bytes"] == 312 * KIB
    assert m["tbfx_idle_mem_limit_bytes"] == round(23.54 * GIB)
    assert m["tbfx_idle_net_rx_bytes"] == idle_rx
    assert m["tbfx_idle_pids"] == 1
    assert m["cpu_total_pct"] == busy_cpu
    containers = result["details"]["containers"]
    assert [c["name"] for c in containers] == ["tbfx-busy", "tbfx-idle"]
    assert [c["id"] for c in containers] == ["b3326aae0135", "0f7bb9b04b41"]
    assert containers[0]["cpu_pct"] == busy_cpu and containers[0]["samples"] == 1
    assert set(FIELDS) <= set(containers[1])


def test_three_samples_mean_and_last():
    result = _parse("cli28_format_json_3samples.txt")
    m = result["metrics"]
    assert m["containers"] == 2
    assert result["details"]["samples"] == {"tbfx-busy": 3, "tbfx-idle": 3}
    assert m["tbfx_busy_cpu_pct"] == pytest.approx((48.38 + 48.38 + 38.68) / 3)
    # cumulative counters keep the last value ("1.04kB" decimal)
    assert m["tbfx_busy_net_rx_bytes"] == 1040
    assert m["tbfx_idle_net_rx_bytes"] == 824
    assert m["tbfx_busy_pids"] == 3
    assert m["cpu_total_pct"] == pytest.approx((48.38 + 48.38 + 38.68) / 3)
    last = _parse("cli28_format_json_3samples.txt", aggregate="last")["metrics"]
    assert last["tbfx_busy_cpu_pct"] == 38.68
    assert last["tbfx_busy_net_rx_bytes"] == 1040


def test_stopped_container_is_null_not_zero():
    result = _parse("cli28_format_json_one_stopped.txt")
    m = result["metrics"]
    assert m["containers"] == 2
    for field in FIELDS:
        assert m["tbfx_idle_%s" % field] is None, field
    assert m["tbfx_busy_cpu_pct"] == 46.49 and m["tbfx_busy_net_rx_bytes"] == 1110
    assert m["cpu_total_pct"] == 46.49
    assert result["warnings"] == [
        "container tbfx-idle is not running (0 B memory limit, no PIDs); its sample is null"]


def test_old_cli_literal_json_is_refused():
    with pytest.raises(ParseError) as exc:
        _parse("cli20_format_json_literal.txt")
    assert "literal word 'json'" in str(exc.value)
    assert "--format '{{json .}}'" in str(exc.value)


def test_table_layout_is_refused():
    with pytest.raises(ParseError, match=r"table output.*\{\{json \.\}\}"):
        _parse("cli28_table_default.txt")


def test_units_spacing_exponent_and_missing_values():
    text = "\n".join([
        _line(Name="a", ID="a1", MemUsage="796 KiB / 64 MiB", NetIO="1e+03kB / 2.5MB", BlockIO="1.2GB / 4.1kB"),
        _line(Name="b", ID="b1", CPUPerc="--", MemPerc="--", MemUsage="-- / --", NetIO="--", PIDs="--"),
    ])
    result = parse(text)
    m = result["metrics"]
    assert m["a_mem_usage_bytes"] == 796 * KIB and m["a_mem_limit_bytes"] == 64 * MIB
    # %.3g of 999.5-999.99 kB prints "1e+03kB": 10**3 kB, i.e. 1 MB
    assert m["a_net_rx_bytes"] == 1000000 and m["a_net_tx_bytes"] == 2500000
    assert m["a_block_read_bytes"] == 1200000000 and m["a_block_write_bytes"] == 4100
    for field in ("cpu_pct", "mem_pct", "mem_usage_bytes", "mem_limit_bytes", "net_rx_bytes", "pids"):
        assert m["b_%s" % field] is None, field
    assert m["b_block_read_bytes"] == 0  # BlockIO was a real "0B / 0B"
    assert m["cpu_total_pct"] == 1.0
    assert any("printed -- for CPUPerc" in w for w in result["warnings"])


def test_names_are_sanitised_and_collisions_disambiguated():
    assert sanitize("Web-Server.1") == "web_server_1"
    text = "\n".join([_line(Name="web-1", ID="aaaaaaaaaaaa"), _line(Name="web_1", ID="bbbbbbbbbbbb")])
    result = parse(text)
    assert result["metrics"]["web_1_cpu_pct"] == 1.0
    assert result["metrics"]["web_1_bbbbbbbbbbbb_cpu_pct"] == 1.0
    assert result["metrics"]["containers"] == 2
    assert any("share the metric prefix" in w for w in result["warnings"])


def test_terminal_escapes_are_removed():
    text = "\x1b[2J\x1b[H" + _line(Name="a", ID="a1") + "\n"
    result = parse(text)
    assert result["metrics"]["a_cpu_pct"] == 1.0
    assert any("escape" in w for w in result["warnings"])


@pytest.mark.parametrize("text, pattern", [
    ("", "empty"),
    ("\n\n", "empty"),
    (_line(CPUPerc="nan%"), "CPUPerc of container c1 is nan"),
    (_line(CPUPerc="12"), "not a percentage"),
    (_line(MemUsage="12 parsecs / 1GiB"), "not a size"),
    (_line(NetIO="1kB"), "expected 'x / y'"),
    (_line(PIDs="three"), "not a whole number"),
    (_line()[:40], "not valid JSON"),
    ('{"foo": 1}', "lacks CPUPerc"),
    ("Total: connections 2400 requests 2400 replies 2400 test-duration 15.998 s", "not a JSON object"),
])
def test_bad_input(text, pattern):
    with pytest.raises(ParseError, match=pattern):
        parse(text)


def test_iperf3_json_is_refused():
    with pytest.raises(ParseError, match="not valid JSON"):
        parse(read_fixture("iperf3", "tcp_3s.json"))


def test_bad_aggregate_option():
    with pytest.raises(ParseError, match="aggregate must be mean or last"):
        parse(_line(), aggregate="median")


def test_module_src_dest_and_aggregate(tmp_path):
    dest = tmp_path / "stats.json"
    src = fixture_path("docker_stats", "cli28_format_json_3samples.txt")
    failed, result = run_module(docker_stats_parse, {"src": src, "dest": str(dest), "aggregate": "last"})
    assert failed is False and result["changed"] is True
    facts = result["ansible_facts"]["docker_stats"]
    assert facts["metrics"]["tbfx_busy_cpu_pct"] == 38.68
    assert facts["details"]["aggregate"] == "last"
    assert json.loads(dest.read_text())["metrics"]["tbfx_idle_pids"] == 1


def test_module_failure_names_tool_and_source():
    src = fixture_path("docker_stats", "cli20_format_json_literal.txt")
    failed, result = run_module(docker_stats_parse, {"src": src})
    assert failed is True
    assert result["msg"].startswith("docker_stats output %s: " % src)
    assert "--format '{{json .}}'" in result["msg"]


def test_module_rejects_unknown_aggregate():
    failed, result = run_module(docker_stats_parse, {"content": _line(), "aggregate": "median"})
    assert failed is True and "aggregate" in result["msg"]
