"""lab_containers: systemd containers with fixed addresses on a lab network."""

import json

import testinfra


def inspect(host, name):
    return json.loads(host.check_output("docker inspect %s" % name))[0]


def test_containers_run_systemd_with_fixed_addresses(host):
    for name, address in (("molecule-lab-web", "10.252.3.11"), ("molecule-lab-client", "10.252.3.21")):
        info = inspect(host, name)
        assert info["State"]["Running"] is True
        assert info["Config"]["Labels"]["testbed.lab"] == "testbed-molecule-ctr"
        assert list(info["NetworkSettings"]["Networks"]) == ["molecule-lab-c"]
        assert info["NetworkSettings"]["Networks"]["molecule-lab-c"]["IPAMConfig"]["IPv4Address"] == address
        container = testinfra.get_host("docker://%s" % name)
        assert container.run("systemctl is-system-running").stdout.strip() in ("running", "degraded")
        assert container.check_output("hostname") == name


def test_capabilities_as_asked(host):
    assert "NET_ADMIN" in (inspect(host, "molecule-lab-web")["HostConfig"]["CapAdd"] or [])
    assert not inspect(host, "molecule-lab-client")["HostConfig"]["CapAdd"]


def test_images_carry_the_lab_packages(host):
    web = testinfra.get_host("docker://molecule-lab-web")
    client = testinfra.get_host("docker://molecule-lab-client")
    assert web.package("apache2").is_installed and web.service("apache2").is_running
    assert client.package("httperf").is_installed


def test_client_reaches_the_web_container(host):
    client = testinfra.get_host("docker://molecule-lab-client")
    out = client.run("python3 -c \"import urllib.request; print(urllib.request.urlopen('http://10.252.3.11/', timeout=5).status)\"")
    assert out.stdout.strip() == "200", out.stderr
