"""Filters of the LVS experiment role (roles/lvs_compare/filter_plugins/lvs_compare.py)."""
import json
import os

import pytest
import yaml
from lvs_compare import (
    AnsibleFilterError,
    FilterModule,
    lvs_clock_note,
    lvs_clock_offsets,
    lvs_collect_command,
    lvs_collected,
    lvs_health,
    lvs_host_results,
    lvs_in_flight,
    lvs_load_window,
    lvs_loads,
    lvs_point_seconds,
    lvs_probe_command,
    lvs_read_command,
    lvs_real_servers,
    lvs_role_of,
    lvs_seconds_until,
    lvs_self_probe_command,
    lvs_step,
    lvs_study_reference,
    lvs_tick_command,
    lvs_wait_next_started,
    lvs_watch_probes,
)

PATHS = {"stats": "/usr/local/sbin/lvs-director-stats", "window": "/usr/local/bin/testbed-cpu-window",
         "samples": "/var/lib/testbed/cpu-sampler/samples.log"}

GROUPS = {"lvs_director": ["d"], "lvs_real_servers": ["w1", "w2"], "lvs_clients": ["c1", "c2"], "other": ["x"]}


def test_real_servers_come_from_lvs_rip_and_weight():
    hv = {"w1": {"lvs_rip": "10.250.2.11"}, "w2": {"lvs_rip": "10.250.2.12", "lvs_weight": 3, "ansible_host": "192.0.2.9"}}
    assert lvs_real_servers(["w1", "w2"], hv, "80") == [
        {"host": "w1", "address": "10.250.2.11", "port": 80, "weight": 1},
        {"host": "w2", "address": "10.250.2.12", "port": 80, "weight": 3}]


@pytest.mark.parametrize("facts, message", [
    ({"ansible_host": "192.0.2.9"}, "real server w1 has no lvs_rip"),
    ({"lvs_rip": "web1"}, "lvs_rip must be an IP address"),
    ({"lvs_rip": "10.0.0.1", "lvs_weight": 1.5}, "lvs_weight must be a whole number"),
    ({"lvs_rip": "10.0.0.1", "lvs_weight": -1}, "lvs_weight must be a whole number"),
])
def test_a_real_server_without_a_usable_lvs_rip_is_an_error(facts, message):
    with pytest.raises(AnsibleFilterError, match=message):
        lvs_real_servers(["w1"], {"w1": facts})


def test_loads_derive_the_connection_count():
    assert lvs_loads([50, 100], 40) == [{"rate": 50, "num_conns": 2000}, {"rate": 100, "num_conns": 4000}]
    assert lvs_loads([2000, 8000], None, 20000) == [{"rate": 2000, "num_conns": 20000}, {"rate": 8000, "num_conns": 20000}]
    assert lvs_point_seconds(lvs_loads([2000, 8000], None, 20000)) == pytest.approx((10 + 2.5) / 2)
    for bad in ([0], [-5], [2.5], "50,100", []):
        with pytest.raises(AnsibleFilterError, match="lvs_loads"):
            lvs_loads(bad, 40)


def test_processes_keep_each_httperf_below_its_rate_cap():
    from testbed_httperf import httperf_processes

    assert httperf_processes(200, 2, "auto", 50) == 2
    assert httperf_processes(201, 2, "auto", 50) == 3
    assert httperf_processes(10, 2, "auto", 1000) == 1
    assert httperf_processes(10, 2, 4, 1000) == 4
    assert httperf_processes("10", "2", "4", "1000") == 4
    for bad in ((0, 2), (10, 0), (10, 2, 0), (10, 2, 2.5), (10, 2, "many"), (10, 2, "auto", 0), ("x", 2),
                (float("nan"), 2), (10, 2, "auto", float("inf"))):
        with pytest.raises(AnsibleFilterError, match="httperf_processes"):
            httperf_processes(*bad)


def test_role_of_and_offsets():
    assert lvs_role_of(GROUPS) == {"d": "director", "w1": "real_server", "w2": "real_server",
                                   "c1": "client", "c2": "client"}
    hv = {"d": {"lvs_compare_clock": {"offset_s": -0.015, "uncertainty_s": 0.12}}, "c1": {}}
    assert lvs_clock_offsets(hv, ["d", "c1"]) == {"d": {"offset_s": -0.015, "uncertainty_s": 0.12}}


def test_host_results_mark_failed_and_missing_steps():
    hv = {"c1": {"run": {"rc": 0, "stdout": "{}"}}, "c2": {"run": {"rc": 1, "stdout": "", "stderr": "boom"}},
          "d": {}, "w1": {"run": {"unreachable": True, "msg": "ssh: no route"}}, "w2": {"run": {"rc": 0}}}
    out = lvs_host_results(hv, lvs_role_of(GROUPS), "run")
    assert out["c1"] == {"host": "c1", "role": "client", "stdout": "{}", "failed": False, "msg": ""}
    assert out["c2"]["failed"] and out["c2"]["msg"] == "boom"
    assert out["d"]["failed"] and out["w1"]["failed"] and out["w1"]["msg"] == "ssh: no route"
    assert set(lvs_host_results(hv, lvs_role_of(GROUPS), "run", "client")) == {"c1", "c2"}


def test_collected_keeps_the_step_with_the_point_whatever_runs_later():
    hv = {"d": {"step": {"rc": 0, "stdout": "=== ipvsadm-stats\nTCP 10.250.1.10:80 rr\n=== zeroed-at\n5.0\n"}},
          "c1": {"step": {"rc": 0, "stdout": "=== prev-cpu\n"}}, "c2": {"step": {"unreachable": True, "msg": "gone"}},
          "w1": {}, "w2": {"step": {"rc": 0, "stdout": ""}}}
    kept = lvs_collected(hv, lvs_role_of(GROUPS), "d", "step")
    assert kept["collected"] is True
    assert kept["director_counters"].startswith("=== ipvsadm-stats\nTCP 10.250.1.10:80 rr")
    assert kept["collect"] == lvs_host_results(hv, lvs_role_of(GROUPS), "step")
    assert kept["collect"]["c2"]["failed"] and kept["collect"]["w1"]["failed"]
    # a later step overwrites the hosts' variable, not what was kept
    hv["d"]["step"] = {"rc": 0, "stdout": "later"}
    assert kept["director_counters"].startswith("=== ipvsadm-stats")
    # no step from the director: no counters (lvs_point makes that a reason of the point)
    assert lvs_collected({**hv, "d": {}}, lvs_role_of(GROUPS), "d", "step")["director_counters"] == ""
    with pytest.raises(AnsibleFilterError, match="director 'x' is not one of the hosts"):
        lvs_collected(hv, lvs_role_of(GROUPS), "x", "step")
    assert kept["switch_table"] is None


def test_collected_keeps_the_table_of_a_switch_the_read_made_only_when_it_succeeded():
    read = ("=== ipvsadm-stats\nTCP 10.250.1.10:80 rr\n=== zeroed-at\n5.0\n=== switch\n=== switched-at\n5.2\n"
            "=== switch-table\n-A -t 10.250.1.10:80 -s wlc\n-a -t 10.250.1.10:80 -r 10.250.2.11:80 -m -w 1\n"
            "=== prev-cpu\n")
    others = {host: {} for host in lvs_role_of(GROUPS) if host != "d"}
    hv = {"d": {"step": {"rc": 0, "stdout": read}}, **others}
    kept = lvs_collected(hv, lvs_role_of(GROUPS), "d", "step")
    assert kept["switch_table"] == "-A -t 10.250.1.10:80 -s wlc\n-a -t 10.250.1.10:80 -r 10.250.2.11:80 -m -w 1"
    failed = read.split("=== switched-at")[0] + "lvs-director-switch: unknown scheduler 'wlc'\n=== prev-cpu\n"
    hv["d"] = {"step": {"rc": 0, "stdout": failed}}
    assert lvs_collected(hv, lvs_role_of(GROUPS), "d", "step")["switch_table"] is None


def test_load_window_is_on_the_controller_time_line():
    clients = {"c1": {"stdout": json.dumps({"started": 100.0, "finished": 140.0})},
               "c2": {"stdout": json.dumps({"started": 100.5, "finished": 141.0})},
               "c3": {"stdout": "not json"}}
    offsets = {"c2": {"offset_s": 0.5, "uncertainty_s": 0.05}}
    assert lvs_load_window(clients, offsets) == [100.0, 140.5]
    assert lvs_load_window({}, {}, 7.0) == [7.0, 7.0]
    with pytest.raises(AnsibleFilterError, match="no client reported"):
        lvs_load_window({}, {})


def test_collect_command_shifts_times_into_the_host_clock():
    prev = {"start": 100.0, "end": 140.0}
    director = lvs_collect_command(prev, True, {"offset_s": -0.5, "uncertainty_s": 0.1}, PATHS)
    assert director.startswith("/usr/local/sbin/lvs-director-stats --after 139.600 --zero;")
    assert "-v start=99.500 -v end=139.500" in director
    other = lvs_collect_command(prev, False, {}, PATHS)
    assert "lvs-director-stats" not in other and "-v start=100.000 -v end=140.000" in other
    assert other.endswith(" /var/lib/testbed/cpu-sampler/samples.log;")
    assert lvs_collect_command(None, True, {}, PATHS) == ""


def test_the_paths_the_collect_steps_run_are_the_roles_defaults():
    """roles/lvs_compare/vars's __lvs_compare_paths fall back to lvs_director's and cpu_sampler's defaults."""
    def load(*parts):
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "roles", *parts), encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    sampler, director = load("cpu_sampler", "defaults", "main.yml"), load("lvs_director", "defaults", "main.yml")
    paths = load("lvs_compare", "vars", "main.yml")["__lvs_compare_paths"]
    assert f"default('{director['lvs_director_bin_dir']}')" in paths["stats"] and paths["read"].endswith("/lvs-director-read")
    assert f"default('{sampler['cpu_sampler_window_bin']}')" in paths["window"]
    assert f"default('{sampler['cpu_sampler_dir']}')" in paths["samples"]
    assert f"default('{sampler['cpu_sampler_log']}')" in paths["samples"]
    assert director["lvs_director_cpu_window_command"] == sampler["cpu_sampler_window_bin"]
    assert director["lvs_director_cpu_samples"] == f"{sampler['cpu_sampler_dir']}/{sampler['cpu_sampler_log']}"


def test_clock_note():
    first = {"d": {"offset_s": -0.015, "uncertainty_s": 0.12}, "c1": {"offset_s": 0.04, "uncertainty_s": 0.05}}
    last = {"d": {"offset_s": 0.055, "uncertainty_s": 0.1}, "c1": {"offset_s": 0.05, "uncertainty_s": 0.05}}
    note = lvs_clock_note(first, last, 3)
    assert "c1 +0.040 s (+/- 0.050), d -0.015 s (+/- 0.120)" in note
    assert "Largest change by its last measurement 0.070 s (d)." in note
    assert lvs_clock_note({}, {}, 3) == ""


def test_filter_module():
    assert "lvs_load_window" in FilterModule().filters()


RS = [{"host": "w1", "address": "10.250.2.11", "port": 80, "weight": 1},
      {"host": "w2", "address": "10.250.2.12", "port": 80, "weight": 1}]


def _probe(role, body, failed=False, msg=""):
    return {"role": role, "stdout": body, "failed": failed, "msg": msg}


def test_probe_commands_probe_each_hop():
    director = lvs_probe_command("director", "10.250.1.10", 80, RS)
    assert "=== watchdog" in director and "NETDEV WATCHDOG" in director
    assert "/dev/tcp/$a" in director and " 10.250.2.11/80 10.250.2.12/80;" in director and "=== rs w2" in director
    # the real servers are opened at once, under one timeout
    assert director.count("timeout 3 bash") == 1
    # each answer is printed with its newline: it cannot swallow the next section's header
    assert director.count('echo "$l"') == 2
    client = lvs_probe_command("client", "10.250.1.10", 80, RS)
    assert "/dev/tcp/10.250.1.10/80" in client and "=== rs" not in client
    assert lvs_probe_command("real_server", "10.250.1.10", 80, RS) == "echo '=== alive'; echo ok"


def test_a_healthy_lab():
    results = {"d": _probe("director", "=== alive\nok\n=== watchdog\n=== rs w1\nHTTP/1.1 200 OK\n=== rs w2\nHTTP/1.1 200 OK"),
               "c1": _probe("client", "=== alive\nok\n=== vip\nHTTP/1.1 200 OK"),
               "w1": _probe("real_server", "=== alive\nok"), "w2": _probe("real_server", "=== alive\nok")}
    assert lvs_health(results, RS) == {"ok": True, "problems": []}


def test_a_hung_director_nic_is_named_with_its_kernel_log_line():
    line = "[  912.3] virtio_net virtio2 eth2: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5120 ms"
    results = {"d": _probe("director", f"=== alive\nok\n=== watchdog\n{line}\n=== rs w1\n\n=== rs w2\n"),
               "c1": _probe("client", "=== alive\nok\n=== vip\n")}
    health = lvs_health(results, RS)
    assert health["ok"] is False
    assert health["problems"][0] == {"component": "d", "evidence": "NIC transmit queue stalled, kernel log: " + line}
    # the real servers behind the hung NIC do not answer either; the VIP line is left out (its cause is named)
    assert [p["component"] for p in health["problems"]] == ["d", "w1", "w2"]


def test_an_unreachable_host_and_a_dead_web_server():
    results = {"d": _probe("director", "=== alive\nok\n=== watchdog\n=== rs w1\nbash: connect: Connection refused\n"
                                       "=== rs w2\nHTTP/1.1 200 OK"),
               "c1": _probe("client", "", failed=True, msg="Failed to connect to the host via ssh")}
    health = lvs_health(results, RS)
    assert health["problems"] == [
        {"component": "c1", "evidence": "did not answer the health probe: Failed to connect to the host via ssh"},
        {"component": "w1", "evidence": "d -> 10.250.2.11:80: bash: connect: Connection refused"}]


def test_no_real_server_reachable_from_the_director_names_its_private_side():
    director = "=== alive\nok\n=== watchdog\n=== rs w1\n\n=== rs w2\nbash: connect: No route to host"
    results = {"d": _probe("director", director), "c1": _probe("client", "=== alive\nok\n=== vip\n"),
               "w1": _probe("real_server", "=== alive\nok"), "w2": _probe("real_server", "=== alive\nok")}
    [problem] = lvs_health(results, RS)["problems"]
    assert problem["component"] == "d"
    assert problem["evidence"].startswith("reaches none of its 2 real servers, each of which answers its own probe")
    assert "10.250.2.11:80: no answer; 10.250.2.12:80: bash: connect: No route to host" in problem["evidence"]


@pytest.mark.parametrize("w1, w2_probe", [
    ("bash: connect: Connection refused", "=== alive\nok"),    # refused: the director reached w1's host
    ("", ""),                                                    # w2 does not answer its own probe either
])
def test_the_real_servers_stay_named_when_the_director_still_reaches_them_or_one_is_down(w1, w2_probe):
    director = f"=== alive\nok\n=== watchdog\n=== rs w1\n{w1}\n=== rs w2\n"
    results = {"d": _probe("director", director), "w1": _probe("real_server", "=== alive\nok"),
               "w2": _probe("real_server", w2_probe, failed=not w2_probe, msg="unreachable")}
    components = [p["component"] for p in lvs_health(results, RS)["problems"]]
    assert "d" not in components and "w1" in components and "w2" in components


def test_only_the_virtual_service_fails():
    results = {"d": _probe("director", "=== alive\nok\n=== watchdog\n=== rs w1\nHTTP/1.1 200 OK\n=== rs w2\nHTTP/1.1 200 OK"),
               "c1": _probe("client", "=== alive\nok\n=== vip\nbash: connect: No route to host")}
    assert lvs_health(results, RS)["problems"] == [
        {"component": "virtual service (via the director)", "evidence": "client c1 -> VIP: bash: connect: No route to host"}]


def test_points_in_flight_become_fault_documents_the_store_accepts(tmp_path):
    from ansible.module_utils.testbed_results import open_run
    from ansible.module_utils.testbed_results.store import store_point
    plan = [{"variant": "rr", "parameters": {"rate": 50}, "repetition": 1}]
    run = open_run(str(tmp_path), "lvs_compare", plan, run_id="r1")
    point = dict(run["points"][0], label="rr rate=50 rep 1")
    runner = json.dumps({"started": 100.0, "finished": 120.5})
    prev = {"point": point, "start": 100.25, "end": 120.5, "counters_zeroed_at": None,
            "clients": [{"host": "lvs-client1", "role": "client", "stdout": runner, "failed": False, "msg": ""},
                        {"host": "lvs-client2", "role": "client", "stdout": "", "failed": True, "msg": "unreachable"}]}
    env = {"hosts": {"lvs-client1": {"hostname": "lvs-client1"}}}
    [item] = lvs_in_flight({"prev": prev, "current": None}, env, "vm")
    assert item["started_at"] == 100.25 and item["finished_at"] == 120.5 and item["metrics"] == {}
    assert item["raw"] == {"lvs-client1.run.json": runner}          # the client without output adds nothing
    assert item["extra"] == {"scheduler": "rr", "director_kind": "vm"}
    evidence = [{"component": "lvs-web2", "evidence": "connection refused"}]
    doc = store_point(str(tmp_path / "lvs_compare" / "r1"), item["point"], item["metrics"], False,
                      ["in flight when the fault was found"], [], item["environment"], item["started_at"],
                      item["finished_at"], raw=item["raw"], extra=item["extra"],
                      fault={"attempt": 1, "evidence": evidence})
    assert doc["point_id"] == "rr__rate-50__fault1__rep1" and doc["verdict"] == "fault" and doc["evidence"] == evidence
    assert doc["raw_files"] == ["raw/rr__rate-50__fault1__rep1.lvs-client1.run.json"]
    assert item["reasons"] == []
    # a load the watchdog stopped says so in its fault document
    finding = "stopped the load 12 s in: lvs-web2 (10.250.2.12 port 80) did not answer 2 probes 5 s apart"
    [stopped] = lvs_in_flight({"prev": dict(prev, watch={"silent": {}, "done": True, "finding": finding}),
                               "current": None}, env, "vm")
    assert stopped["reasons"] == ["the watchdog " + finding]
    assert lvs_in_flight(None, env) == [] and lvs_in_flight(lvs_step(None, "reset"), env) == []
    with pytest.raises(AnsibleFilterError, match="lvs_in_flight: point 'rr__rate-50__rep1' in flight has no load window"):
        lvs_in_flight({"prev": {"point": point, "start": None, "end": 1}}, env)


def test_the_director_probe_runs_and_names_each_real_server(tmp_path):
    # The director's probe line, run by sh against three loopback listeners: one answers HTTP, one
    # refuses (closed port), one accepts and never answers (as a paused real server would).
    import shutil
    import socket
    import subprocess
    import threading
    import time

    if not shutil.which("bash") or not shutil.which("timeout"):
        pytest.skip("needs bash and timeout")
    answering = socket.socket()
    answering.bind(("127.0.0.1", 0))
    answering.listen(4)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()

    def serve():
        conn, _ = answering.accept()
        conn.recv(100)
        conn.sendall(b"HTTP/1.1 200 OK\r\nServer: test\r\n\r\n")
        conn.close()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    rs = [{"host": "up", "address": "127.0.0.1", "port": answering.getsockname()[1]},
          {"host": "down", "address": "127.0.0.1", "port": closed_port},
          {"host": "hung", "address": "127.0.0.1", "port": silent.getsockname()[1]}]
    line = lvs_probe_command("director", "127.0.0.1", 80, rs, timeout=1)
    began = time.monotonic()
    out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    took = time.monotonic() - began
    answering.close()
    silent.close()
    # Hang guard, not a speed test: the three probes are bounded by their 1 s timeouts (a probe without one
    # would wait for the TCP default, minutes, on the silent port); generous for a slow, loaded machine.
    assert took < 30
    assert list(tmp_path.iterdir()) == []
    health = lvs_health({"d": {"role": "director", "stdout": out.stdout, "failed": out.returncode != 0, "msg": ""}},
                        [{**s, "address": f"{s['address']}"} for s in rs])
    evidence = {p["component"]: p["evidence"] for p in health["problems"]}
    assert set(evidence) == {"down", "hung"}, out.stdout
    assert "Connection refused" in evidence["down"]
    assert evidence["hung"].endswith("no answer")
    assert "=== rs up\nHTTP/1.1 200 OK\n" in out.stdout


def test_collect_command_prints_a_read_started_during_the_load():
    prev = {"start": 100.0, "end": 139.0, "read_file": "/var/lib/testbed/lvs-compare/p1.read", "read_wait_s": 2}
    director = lvs_collect_command(prev, True, {"offset_s": -0.5}, PATHS)
    assert "lvs-director-stats" not in director                     # read already, by the job it started
    assert '[ "$i" -lt 20 ]' in director and "cat /var/lib/testbed/lvs-compare/p1.read;" in director
    assert "rm -f /var/lib/testbed/lvs-compare/p1.read;" in director and "exit 1" in director
    # the other hosts still print their CPU samples of the window
    assert "-v start=100.000 -v end=139.000" in lvs_collect_command(prev, False, {}, PATHS)


def test_read_command_starts_the_directors_read_in_its_own_session():
    current = {"start_at": 100.0, "read_after": 139.2, "read_file": "/var/lib/testbed/lvs-compare/p1.read"}
    cmd = lvs_read_command(current, {"offset_s": -0.5, "uncertainty_s": 0.1}, "/usr/local/sbin/lvs-director-read")
    # 139.2 - 0.5 and 100 - 1 - 0.5: the director's clock; the CPU window from 1 s before the load
    assert cmd == ("nohup setsid -f /usr/local/sbin/lvs-director-read --after 138.700 --cpu-start 98.500 "
                   "--out /var/lib/testbed/lvs-compare/p1.read < /dev/null > /dev/null 2>&1")
    assert lvs_read_command(dict(current, switch_to="wlc"), {}, "/r").startswith(
        "nohup setsid -f /r --after 139.200 --cpu-start 99.000 --out /var/lib/testbed/lvs-compare/p1.read --switch wlc <")
    with pytest.raises(AnsibleFilterError, match="absolute path"):
        lvs_read_command(dict(current, read_file="p.read"), {}, "/r")
    with pytest.raises(AnsibleFilterError, match="epoch seconds"):
        lvs_read_command(dict(current, read_after="soon"), {}, "/r")
    with pytest.raises(AnsibleFilterError, match="switch_to must be a scheduler name"):
        lvs_read_command(dict(current, switch_to="rr; reboot"), {}, "/r")


def test_waits_computed_from_the_state():
    assert lvs_seconds_until(1010.0, 1000.4) == 9 and lvs_seconds_until(990.0, 1000.0) == 0
    assert lvs_wait_next_started({"next": {"point_id": "p", "start_at": 1003.2}}, 1000.0) == 4
    assert lvs_wait_next_started({"next": None}, 1000.0) == 0
    with pytest.raises(AnsibleFilterError, match="epoch seconds"):
        lvs_seconds_until("soon", 1.0)


def test_a_passive_probe_leaves_the_virtual_service_to_the_running_load():
    # While a load launched ahead runs, the clients do not open the VIP (the director would count it)
    client = lvs_probe_command("client", "10.250.1.10", 80, RS, through_vip=False)
    assert client == "echo '=== alive'; echo ok"
    director = lvs_probe_command("director", "10.250.1.10", 80, RS, through_vip=False)
    assert director == lvs_probe_command("director", "10.250.1.10", 80, RS)
    results = {"d": _probe("director", "=== alive\nok\n=== watchdog\n=== rs w1\nHTTP/1.1 200 OK\n=== rs w2\nHTTP/1.1 200 OK"),
               "c1": _probe("client", "=== alive\nok")}
    assert lvs_health(results, RS, through_vip=False) == {"ok": True, "problems": []}
    assert lvs_health(results, RS)["problems"][0]["component"] == "virtual service (via the director)"
    # a client that does not answer is still named
    results["c1"] = _probe("client", "", failed=True, msg="unreachable")
    assert lvs_health(results, RS, through_vip=False)["problems"][0]["component"] == "c1"


def test_tick_command_waits_for_a_tick_on_the_directors_clock_without_zeroing():
    assert lvs_tick_command(1000.3, {"offset_s": -0.5}, "/usr/local/sbin/lvs-director-stats") == (
        "/usr/local/sbin/lvs-director-stats --after 999.800")
    with pytest.raises(AnsibleFilterError, match="epoch seconds"):
        lvs_tick_command("now", {}, "/s")


def test_study_reference_groups_the_cells_of_one_metric_by_rate():
    cells = [{"metric": "net_io_kb_s", "rate": 2000, "scheduler": "rr", "value": 310},
             {"metric": "net_io_kb_s", "rate": 2000, "scheduler": "wrr", "value": 402.5},
             {"metric": "response_time_ms", "rate": 2000, "scheduler": "rr", "value": 9.1},
             {"metric": "net_io_kb_s", "rate": 14000, "scheduler": "wrr", "value": 155}]
    assert lvs_study_reference(cells, "net_io_kb_s", "the study") == {
        "label": "the study", "values": {"2000": {"rr": 310.0, "wrr": 402.5}, "14000": {"wrr": 155.0}}}
    assert lvs_study_reference(cells, "error_pct", "the study") is None
    assert lvs_study_reference([], "net_io_kb_s", "the study") is None



def test_the_reports_study_findings_name_metrics_the_points_have():
    """The study's findings (roles/lvs_compare/vars) pass the renderer's check and compute from metrics the
    report lists, with a direction for those a ranking needs."""
    from ansible.module_utils.testbed_reports.findings import check_findings
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "roles", "lvs_compare", "vars", "main.yml"),
              encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)["__lvs_compare_report_spec"]
    findings = check_findings(spec["findings"])
    assert [i["value"] for i in findings["items"]] == ["valid", "range", "range", "max", "max", "best", "best"]
    for item in findings["items"]:
        assert set(item["metrics"]) <= set(spec["metrics"]), item
        if item["value"] == "best":
            assert item["metrics"][0] in spec["higher_is_better"] and item["by"] == "rate"


def test_the_studys_60_cells_are_shipped_as_it_prints_them():
    """Tables 4.1 and 4.2 of the study, every rate x scheduler once, with the cells it contradicts flagged."""
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "roles", "lvs_compare", "defaults", "main.yml")) as f:
        defaults = yaml.safe_load(f)
    cells = defaults["lvs_compare_study_cells"]
    schedulers = ["rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq"]
    for metric in ("net_io_kb_s", "response_time_ms"):
        keys = sorted((c["rate"], c["scheduler"]) for c in cells if c["metric"] == metric)
        assert keys == sorted((rate, s) for rate in (2000, 8000, 14000) for s in schedulers), metric
    throughput = lvs_study_reference(cells, "net_io_kb_s", "the study")["values"]
    response = lvs_study_reference(cells, "response_time_ms", "the study")["values"]
    # first and last cells of each table, and the five cells its raw outputs contradict (the table's values)
    assert throughput["2000"]["rr"] == 203.2 and throughput["14000"]["nq"] == 110.1
    assert response["2000"]["rr"] == 1038.7 and response["14000"]["nq"] == 689.2
    assert (response["2000"]["sed"], response["8000"]["lblcr"], response["8000"]["dh"]) == (763.6, 708.9, 872.7)
    assert (throughput["14000"]["dh"], response["14000"]["dh"]) == (220.7, 483.5)
    # the study's own best per rate: not wrr, whatever its text says
    assert [max(throughput[r], key=throughput[r].get) for r in ("2000", "8000", "14000")] == ["sh", "rr", "dh"]
    assert [min(response[r], key=response[r].get) for r in ("2000", "8000", "14000")] == ["lblc", "sh", "lblc"]
    notes = " ".join(defaults["lvs_compare_study_notes"])
    for flagged in ("763.8", "780.9", "483.5", "65.1", "374.2", '"wrr is best"', "sh, rr and dh", "lblc, sh and lblc"):
        assert flagged in notes, flagged


def test_self_probe_command_opens_the_servers_own_address_and_port():
    server = {"host": "lvs-web2", "address": "10.250.2.12", "port": 80, "weight": 1}
    assert lvs_self_probe_command(server, 2) == (
        "timeout 2 bash -c 'exec 3<>/dev/tcp/10.250.2.12/80' 2>/dev/null && echo answered")
    for bad, message in (({"host": "x"}, "must be {host, address, port}"),
                         ({"host": "x", "address": "10.0.0.1'; reboot; '"}, "not a host name or IP address"),
                         ({"host": "x", "address": "10.0.0.1", "port": 70000}, "port must be 1-65535")):
        with pytest.raises(AnsibleFilterError, match=message):
            lvs_self_probe_command(bad)


def test_watch_probes_count_only_an_answer_as_alive():
    servers = [{"host": f"lvs-web{i}", "address": f"10.250.2.1{i}", "port": 80} for i in (1, 2, 3, 4)]
    hostvars = {"lvs-web1": {"probe": {"rc": 0, "stdout": "answered\n"}},
                "lvs-web2": {"probe": {"unreachable": True, "msg": "container not running"}},
                "lvs-web3": {"probe": {"rc": 1, "stdout": ""}},
                "lvs-web4": {}}
    assert lvs_watch_probes(hostvars, servers, "probe") == {
        "lvs-web1": {"answered": True, "shown": "10.250.2.11 port 80"},
        "lvs-web2": {"answered": False, "shown": "10.250.2.12 port 80"},
        "lvs-web3": {"answered": False, "shown": "10.250.2.13 port 80"},
        "lvs-web4": {"answered": False, "shown": "10.250.2.14 port 80"}}
