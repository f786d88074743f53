"""Filters of the LVS director role (roles/lvs_director/filter_plugins/lvs_director.py).

The tables are in the form `ipvsadm -Sn` prints (ipvsadm 1.31, Debian bookworm): the role's service
10.251.1.10:80 next to a service of another IPVS user on the same host.
"""
import pytest
from lvs_director import (
    AnsibleFilterError,
    FilterModule,
    lvs_director_service_key,
    lvs_director_service_lines,
    lvs_director_sync,
)

KEY = "-t 10.251.1.10:80"
FOREIGN = ["-A -t 10.9.9.9:8080 -s rr", "-a -t 10.9.9.9:8080 -r 10.251.2.11:8080 -m -w 2"]
OURS = ["-A -t 10.251.1.10:80 -s wlc", "-a -t 10.251.1.10:80 -r 10.251.2.11:80 -m -w 3",
        "-a -t 10.251.1.10:80 -r 10.251.2.12:80 -m -w 1"]


def table(*lines):
    return "\n".join(lines) + "\n"


def test_service_key_as_ipvsadm_prints_it():
    assert lvs_director_service_key("10.251.1.10", 80) == KEY
    assert lvs_director_service_key("10.251.1.10", "8080", "udp") == "-u 10.251.1.10:8080"
    assert lvs_director_service_key("2001:db8::10", 80, "TCP") == "-t [2001:db8::10]:80"


@pytest.mark.parametrize("vip, port, protocol, message", [
    ("", 80, "tcp", "not an IP address"),
    ("10.251.1.10", 0, "tcp", "not a port number"),
    ("10.251.1.10", "http", "tcp", "not a port number"),
    ("10.251.1.10", 80, "sctp", "protocol 'sctp'"),
])
def test_service_key_refuses_bad_input(vip, port, protocol, message):
    with pytest.raises(AnsibleFilterError, match=message):
        lvs_director_service_key(vip, port, protocol)


def test_service_lines_are_the_service_s_own():
    live = table(*FOREIGN[:1], *OURS[:2], FOREIGN[1], "-A -t 10.251.1.10:8080 -s rr", "-A -t 10.251.1.100:80 -s rr")
    assert lvs_director_service_lines(live, KEY) == OURS[:2]
    assert lvs_director_service_lines(live, "-t 10.9.9.9:8080") == FOREIGN
    assert lvs_director_service_lines("", KEY) == []
    assert lvs_director_service_lines("-A  -t 10.251.1.10:80   -s rr \r\n", KEY) == ["-A -t 10.251.1.10:80 -s rr"]


def test_service_lines_refuse_a_bad_key():
    with pytest.raises(AnsibleFilterError, match="is not '-t ADDRESS:PORT'"):
        lvs_director_service_lines("", "10.251.1.10:80")


def test_sync_adds_a_missing_service_and_leaves_others_alone():
    assert lvs_director_sync(table(*FOREIGN), table(*OURS), KEY) == OURS
    assert lvs_director_sync("", table(*OURS), KEY) == OURS


def test_sync_nothing_when_the_live_service_is_the_saved_one():
    # ipvsadm -Sn lists real servers sorted by address, the saved lines follow the inventory.
    live = table(*FOREIGN, OURS[0], OURS[2], OURS[1])
    assert lvs_director_sync(live, table(*OURS), KEY) == []


def test_sync_edits_the_service_and_its_real_servers():
    live = table(*FOREIGN, "-A -t 10.251.1.10:80 -s rr", "-a -t 10.251.1.10:80 -r 10.251.2.11:80 -m -w 1",
                 "-a -t 10.251.1.10:80 -r 10.251.2.13:80 -m -w 1")
    assert lvs_director_sync(live, table(*OURS), KEY) == [
        "-E -t 10.251.1.10:80 -s wlc",
        "-d -t 10.251.1.10:80 -r 10.251.2.13:80",
        "-e -t 10.251.1.10:80 -r 10.251.2.11:80 -m -w 3",
        "-a -t 10.251.1.10:80 -r 10.251.2.12:80 -m -w 1",
    ]


def test_sync_never_clears_nor_deletes_the_service():
    live = table(*FOREIGN, "-A -t 10.251.1.10:80 -s rr -p 300", "-a -t 10.251.1.10:80 -r 10.251.2.99:80 -m -w 1")
    commands = lvs_director_sync(live, table(*OURS), KEY)
    assert not [c for c in commands if c.split()[0] in ("-C", "-D", "--clear", "--delete-service")]
    assert commands[0] == "-E -t 10.251.1.10:80 -s wlc"


@pytest.mark.parametrize("want, message", [
    (table(*FOREIGN), "not of the service"),
    (table(OURS[1], OURS[0]), "must start with its one '-A' line"),
    (table(OURS[0], OURS[0]), "must start with its one '-A' line"),
    ("", "must start with its one '-A' line"),
])
def test_sync_refuses_a_wanted_table_that_is_not_the_service(want, message):
    with pytest.raises(AnsibleFilterError, match=message):
        lvs_director_sync("", want, KEY)


def test_sync_refuses_a_real_server_line_without_address():
    with pytest.raises(AnsibleFilterError, match="has no '-r ADDRESS:PORT'"):
        lvs_director_sync(table(OURS[0], "-a -t 10.251.1.10:80 -m -w 1"), table(*OURS), KEY)


def test_filter_module_lists_the_filters():
    assert sorted(FilterModule().filters()) == ["lvs_director_service_key", "lvs_director_service_lines",
                                               "lvs_director_sync"]
