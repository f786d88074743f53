"""Behaviour of a host converged with lvs_real_server."""

import json

import pytest

STOCK_PAGE = "<html><body><h1>It works!</h1></body></html>\n"


def fetch(host, path):
    out = host.run("python3 -c \"import urllib.request,sys; "
                   "sys.stdout.write(urllib.request.urlopen('http://127.0.0.1%s', timeout=5).read().decode())\"" % path)
    assert out.rc == 0, out.stderr
    return out.stdout


def test_serves_the_fixed_page(host):
    assert fetch(host, "/") == STOCK_PAGE


def test_whoami_names_the_host(host):
    assert fetch(host, "/whoami.txt").strip() == host.backend.get_hostname()


def test_default_route_set_by_the_unit(host):
    unit = host.service("lvs-real-server-net")
    assert unit.is_enabled
    assert host.run("systemctl is-active lvs-real-server-net").stdout.strip() == "active"
    script = host.file("/usr/local/sbin/lvs-real-server-net").content_string
    assert "ip route replace default via" in script
    route = host.run("ip -4 -o route show default").stdout
    gateway = script.split("ip route replace default via ")[1].split()[0]
    assert route.split()[2] == gateway


def test_management_route_added_before_the_default_route(host):
    script = host.file("/usr/local/sbin/lvs-real-server-net").content_string
    # through the container's real gateway (prepare.yml), not the stand-in director
    gateway = json.loads(host.file("/root/molecule-before.json").content_string)["gateway"]
    management = "ip route replace 198.51.100.123/32 via %s" % gateway
    assert management in script
    assert script.index(management) < script.index("ip route replace default via")
    route = host.run("ip -4 -o route show 198.51.100.123/32").stdout.split()
    assert route[:3] == ["198.51.100.123", "via", gateway]


def test_state_records_what_the_host_had(host):
    before = json.loads(host.file("/root/molecule-before.json").content_string)
    state = json.loads(host.file("/var/lib/testbed/lvs_real_server/state.json").content_string)
    assert state["default_routes"] == before["default"]
    assert state["management_routes"] == {"198.51.100.123/32": True}
    assert state["files"]["/var/www/html/whoami.txt"] is False
    # the role's default route really replaced the container's
    assert host.run("ip -4 -o route show default").stdout.split()[2] == before["director"] != before["gateway"]


@pytest.mark.parametrize("path", ["/etc/apache2/mods-enabled/mpm_prefork.load"])
def test_apache_prefork_with_limits(host, path):
    if not host.package("apache2").is_installed:
        pytest.skip("nginx instance")
    assert host.file(path).exists
    assert not host.file("/etc/apache2/mods-enabled/mpm_event.load").exists
    conf = host.file("/etc/apache2/mods-available/mpm_prefork.conf").content_string
    assert "MaxRequestWorkers 64" in conf
    assert "MaxConnectionsPerChild 5000" in conf
    assert "MaxSpareServers 10" in conf
    assert host.run("apachectl -t").rc == 0
    assert "ServerTokens Prod" in host.file("/etc/apache2/conf-enabled/testbed-lvs.conf").content_string
    assert host.service("apache2").is_running
    # The running server really is prefork (apachectl -V names the MPM).
    assert "prefork" in host.run("apachectl -V").stdout


def test_nginx_limits(host):
    if not host.package("nginx-light").is_installed:
        pytest.skip("apache instance")
    assert "worker_connections 2048;" in host.file("/etc/nginx/nginx.conf").content_string
    assert host.run("nginx -t").rc == 0
    assert host.service("nginx").is_running
    assert not host.package("apache2").is_installed
