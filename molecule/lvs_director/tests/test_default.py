"""Behaviour of the director VM converged with lvs_director (real kernel IPVS).

The director is shared (prepare.yml): another IPVS user's service, 10.251.1.1:8080, was there before
the testbed; its `ipvsadm -Sn` is in /root/molecule-foreign.sn.
"""

import json
import time

import testinfra

VIP = "10.251.1.10"
RS = "10.251.2.11"
FOREIGN = "10.251.1.1:8080"
OURS = ["-A -t %s:80 -s rr" % VIP, "-a -t %s:80 -r %s:80 -m -w 3" % (VIP, RS)]


def table(host):
    return host.run("ipvsadm -Sn").stdout.splitlines()


def ours(lines):
    return [line for line in lines if line.startswith(("-A -t %s:80 " % VIP, "-a -t %s:80 " % VIP))]


def others(host):
    return [line for line in table(host) if line not in ours([line])]


def conns(host, service):
    """Conns of a service in `ipvsadm -Ln --stats --exact`."""
    out = host.run("ipvsadm -Ln --stats --exact").stdout.splitlines()
    return int([row for row in out if row.startswith("TCP  %s " % service)][0].split()[2])


def test_kernel_ipvs_and_forwarding(host):
    assert host.file("/proc/net/ip_vs").exists
    assert host.run("cat /proc/sys/net/ipv4/ip_forward").stdout.strip() == "1"
    for module in ("ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_lblcr", "ip_vs_nq"):
        assert host.file("/sys/module/%s" % module).is_directory
    assert "ip_vs_sed" in host.file("/etc/modules-load.d/lvs-director.conf").content_string


def test_marker_names_the_service_and_the_earlier_values(host):
    marker = json.loads(host.file("/var/lib/testbed/lvs_director/service.json").content_string)
    assert marker["service"] == "-t %s:80" % VIP
    # prepare.yml turned forwarding off before converge: that is what absent puts back
    assert marker["sysctl_before"] == {"net.ipv4.ip_forward": "0"}
    assert marker["vip"] == {"address": VIP, "prefix": 32, "dev": "eth1"}


def test_table_after_the_switch(host):
    # side_effect switched wlc -> rr (and rr -> rr); the saved lines follow the live ones.
    assert ours(table(host)) == OURS
    assert host.file("/etc/lvs-director.rules").content_string.splitlines() == OURS
    assert 'LVS_DIRECTOR_SERVICE="-t %s:80"' % VIP in host.file("/etc/default/lvs-director").content_string
    # Debian's ipvsadm service (whose start runs ipvsadm -C) is not used, its files not touched.
    assert 'AUTO="false"' in host.file("/etc/default/ipvsadm").content_string
    assert "-A" not in host.file("/etc/ipvsadm.rules").content_string


def test_the_other_service_is_untouched(host):
    assert others(host) == host.file("/root/molecule-foreign.sn").content_string.splitlines()


def test_vip_and_masquerade(host):
    assert host.run("ip -o -4 addr show dev eth1 to %s/32" % VIP).stdout.strip() != ""
    nat = host.run("iptables -t nat -S POSTROUTING").stdout
    assert "-A POSTROUTING -s 10.251.2.0/24 -o eth1" in nat and "testbed-lvs" in nat and "MASQUERADE" in nat


def connect(client, address, port):
    """One TCP connection attempt from the client (refused is fine: IPVS counts it)."""
    return client.run("python3 -c \"import socket; socket.create_connection(('%s', %d), 5)\"" % (address, port))


def test_traffic_goes_through_ipvs_nat(host):
    client = testinfra.get_host("docker://lvs-director-molecule-client")
    # Traffic to the other service too: its counters must survive the testbed's zeroing.
    address, port = FOREIGN.split(":")
    for _ in range(3):
        connect(client, address, int(port))
    # ipvsadm shows the per-CPU counters summed on the 2 s estimator tick, which an emulated guest on
    # a busy machine can run late: wait for the counters themselves (a minute at most)
    deadline = time.monotonic() + 60
    while conns(host, FOREIGN) < 3 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert conns(host, FOREIGN) >= 3
    host.run("ipvsadm -Z -t %s:80" % VIP)
    for _ in range(5):
        out = client.run("python3 -c \"import urllib.request; "
                         "print(urllib.request.urlopen('http://%s/', timeout=10).status)\"" % VIP)
        assert out.rc == 0, out.stderr
        assert out.stdout.strip() == "200"
    # lvs-director-stats waits for the IPVS estimator tick, then reads and zeroes.
    # The tick comes anywhere in its 2 s period: what is checked is that the read
    # waited for one after EPOCH ("settled": "tick <s after EPOCH>" or "period 2.1"),
    # not how long that took.
    # the epoch is the guest's own time: its clock, not the controller's, dates the estimator's ticks
    out = host.run("lvs-director-stats --after \"$(date +%s.%N)\" --zero")
    assert out.rc == 0, out.stderr
    sections = out.stdout.split("=== ")
    settled = [s.split("\n", 1)[1].strip() for s in sections if s.startswith("settled")]
    assert settled, out.stdout
    kind, value = settled[0].split()
    assert (kind == "tick" and float(value) >= 0) or (kind == "period" and float(value) >= 2.0), settled
    stats = [s for s in sections if s.startswith("ipvsadm-stats")][0]
    # "-> RS:80 " (the other service's real server is RS:8080)
    line = [row for row in stats.splitlines() if row.strip().startswith("-> %s:80 " % RS)][0]
    assert int(line.split()[2]) == 5  # Conns column
    assert [s for s in sections if s.startswith("zeroed-at")]
    after = host.run("ipvsadm -Ln --stats --exact").stdout
    rs_line = [row for row in after.splitlines() if row.strip().startswith("-> %s:80 " % RS)][0]
    assert int(rs_line.split()[2]) == 0
    # the testbed zeroed its own service only
    assert conns(host, FOREIGN) >= 3
    assert host.run("lvs-director-switch rr").rc == 0
    assert conns(host, FOREIGN) >= 3


def test_switch_refuses_unknown_scheduler(host):
    out = host.run("lvs-director-switch nosuch")
    assert out.rc == 2
    assert "unknown scheduler 'nosuch'" in out.stderr


def test_switch_with_stamp_zeroes_switches_and_says_when(host):
    # As a counter read on the timetable calls it (roles/lvs_compare): -Z and -E of the service in one
    # ipvsadm -R, then when, then the service's lines; the saved lines follow.
    before = float(host.check_output("date +%s.%N"))
    out = host.run("lvs-director-switch --stamp wrr")
    after = float(host.check_output("date +%s.%N"))
    assert out.rc == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "=== zeroed-at" and lines[2] == "=== switched-at" and lines[4] == "=== switch-table"
    # the stamp is the guest's clock between the two reads of it around the call
    assert before <= float(lines[3]) <= after and lines[1] == lines[3]
    assert lines[5:] == ["-A -t %s:80 -s wrr" % VIP, "-a -t %s:80 -r %s:80 -m -w 3" % (VIP, RS)]
    assert host.file("/etc/lvs-director.rules").content_string.splitlines() == lines[5:]
    assert others(host) == host.file("/root/molecule-foreign.sn").content_string.splitlines()
    # back to the scheduler the other tests expect
    assert host.run("lvs-director-switch rr").rc == 0


def test_switch_says_when_the_service_is_gone(host):
    # Deleted behind the role's back, the service comes back when the scheduler stays (-D, -A, -a) and
    # an -E to another one fails with a sentence instead of printing a table.
    host.run("ipvsadm -D -t %s:80" % VIP)
    out = host.run("lvs-director-switch wlc")
    assert out.rc == 1
    assert "the service is not the saved one with wlc" in out.stderr
    assert host.file("/etc/lvs-director.rules").content_string.splitlines() == OURS
    assert host.run("lvs-director-switch rr").rc == 0
    assert ours(table(host)) == OURS
