"""guest_services' server configurations: one listening address, anonymous uploads only when asked.

The templates are rendered as Ansible renders them (Jinja2, the role's defaults), for the role's
defaults (loopback, downloads only: what a machine used for other things gets) and for a container
guest as container_compare sets it up (every address of the guest's own network, uploads for put).
"""
import os

import jinja2
import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLE = os.path.join(ROOT, "roles", "guest_services")


def render(name, **overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        values = yaml.safe_load(handle)
    values.update(overrides, ansible_managed="managed")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")), trim_blocks=True)
    lines = env.get_template(name).render(**values).splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_defaults_listen_on_loopback_and_refuse_uploads():
    vsftpd = render("vsftpd.conf.j2")
    assert "listen_address=127.0.0.1" in vsftpd
    for line in ("write_enable=NO", "anon_upload_enable=NO", "anon_other_write_enable=NO"):
        assert line in vsftpd
    assert not [line for line in vsftpd if line.endswith("=YES") and ("upload" in line or "write" in line)]
    assert render("ports.conf.j2") == ["Listen 127.0.0.1:80"]


@pytest.mark.parametrize("address", ["0.0.0.0", "10.253.0.1"])
def test_a_guest_or_a_bridge_address_and_uploads_when_asked(address):
    vsftpd = render("vsftpd.conf.j2", guest_services_bind_address=address, guest_services_ftp_anonymous_upload=True)
    assert "listen_address=%s" % address in vsftpd
    for line in ("write_enable=YES", "anon_upload_enable=YES", "anon_other_write_enable=YES"):
        assert line in vsftpd
    assert render("ports.conf.j2", guest_services_bind_address=address, guest_services_web_port=8080) == [
        "Listen %s:8080" % address]
