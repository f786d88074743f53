"""container-compare checks its free-form settings on the controller before any guest is built.

All bad values in one run: the check reports every problem at once, one sentence
each, exit status 10, nothing written.
"""
import os

import pytest
from playbook_run import assert_refused_with, batch_ids, exit_line, one_run_per_batch, play, unreachable_inventory, why

FREE_FORM = {
    "container_compare_disk_block_size=banana": "container_compare_disk_block_size is 'banana', not a block size",
    "container_compare_disk_iodepth=1000000": "container_compare_disk_iodepth must be at most 1024, got 1000000",
    "container_compare_web_port=22": "container_compare_web_port is 22: port 22 is sshd's",
    "container_compare_work_dir=/": "container_compare_work_dir is '/', not an absolute path other than /",
}


def test_free_form_values_are_refused_in_one_run(tmp_path):
    proc = play("playbooks/container-compare.yml", *[a for extra in FREE_FORM for a in ("-e", extra)],
                results=tmp_path, timeout=300)
    assert proc.returncode == 10, why(proc)
    assert "%d problems with its input" % len(FREE_FORM) in proc.stdout, why(proc)
    for sentence in FREE_FORM.values():
        assert sentence in proc.stdout, sentence
    assert exit_line(proc).startswith("Exit status 10 (refused)")
    assert not os.listdir(tmp_path)


# One bad input each - of container_compare or of a role it builds the guests with (runtime_*,
# guest_services, guest_rootfs) - on an inventory no run could reach (127.0.0.1 port 1 over ssh,
# the native variant too): each stops in seconds with exit status 10 and exactly one sentence
# (inputs that set different variables share a run: N inputs, N problems, each one's sentence).
HOSTS = """
all:
  vars: {container_compare_native_ftp_upload: true, container_compare_native_mail: true}
  children:
    container_host:
      hosts:
        bench1: {}
    container_guests:
      hosts:
        bench1-native: {container_compare_variant: native}
        cc-docker: {container_compare_variant: docker}
"""


# One bad setting each; run in batches of disjoint settings (playbook_run.one_run_per_batch).
CASES = [
    ("container_compare_disk_block_size=banana", "container_compare_disk_block_size is 'banana', not a block size"),
    ("container_compare_disk_iodepth=1000000", "container_compare_disk_iodepth must be at most 1024, got 1000000"),
    ("container_compare_disk_size_mb=0", "container_compare_disk_size_mb must be at least 1, got 0"),
    ("container_compare_web_port=22", "container_compare_web_port is 22: port 22 is sshd's"),
    ("container_compare_iperf3_port=70000", "container_compare_iperf3_port must be at most 65535, got 70000"),
    ("container_compare_work_dir=/", "container_compare_work_dir is '/', not an absolute path other than /"),
    ("container_compare_client_dir=results", "container_compare_client_dir is 'results', not an absolute path"),
    ('{"container_compare_web_concurrency": [10, 50000]}',
     "container_compare_web_concurrency item 2 must be at most 20000, got 50000"),
    ("container_compare_web_requests=0", "container_compare_web_requests must be at least 1, got 0"),
    ("container_compare_net_streams=1000", "container_compare_net_streams must be at most 128, got 1000"),
    ("container_compare_lat_request_bytes=100000", "container_compare_lat_request_bytes must be at most 65507, got 100000"),
    ("container_compare_repetitions=0", "container_compare_repetitions must be at least 1, got 0"),
    ("container_compare_hpcc_n=10000000", "container_compare_hpcc_n must be auto or a whole number from 128 "
                                          "(container_compare_hpcc_nb) to 200000, got 10000000"),
    ("container_compare_ftp_upload_dir=../etc", "container_compare_ftp_upload_dir is '../etc', not a plain name"),
    ("container_compare_mail_domain=localhost", "container_compare_mail_domain is 'localhost', not a domain name"),
    ("container_compare_mail_user=5", "unknown variable container_compare_mail_user: did you mean container_compare_mail_users?"),
    ("runtime_docker_memory=lots", "runtime_docker_memory is 'lots', not a memory size such as 512m"),
    ("runtime_docker_cpus=two", "runtime_docker_cpus is 'two', not a number of CPUs"),
    ("runtime_docker_memmory=4g", "unknown variable runtime_docker_memmory: did you mean runtime_docker_memory?"),
    ("runtime_podman_conf_file=containers.conf", "runtime_podman_conf_file is 'containers.conf', not an absolute path"),
    ("runtime_lxc_ipv4_address=10.0.3.10", "runtime_lxc_ipv4_address is '10.0.3.10', not an IPv4 network"),
    ("runtime_lxd_boot_timeout=0", "runtime_lxd_boot_timeout must be at least 1, got 0"),
    ("runtime_kvm_memory_mb=10", "runtime_kvm_memory_mb must be at least 256, got 10"),
    ("runtime_kvm_ssh_port=22", "runtime_kvm_ssh_port is 22: port 22 is sshd's"),
    ("runtime_kvm_address=not-an-ip", "runtime_kvm_address is 'not-an-ip', not an IPv4 address"),
    ("runtime_kvm_cpus=5000", "runtime_kvm_cpus must be at most 1024, got 5000"),
    ("guest_services_ftp_pasv_min_port=21", "guest_services_ftp_pasv_min_port must be at least 1024, got 21"),
    ("guest_services_smtp_hostname=mail", "guest_services_smtp_hostname is 'mail', not a fully qualified host name"),
    ("guest_services_bind_address=everywhere", "guest_services_bind_address is 'everywhere', not an IPv4 address"),
    ("guest_rootfs_dir=/", "guest_rootfs_dir is '/', not an absolute path other than /"),
    ("container_compare_native_bind_address=0.0.0.0",
     "container_compare_native_bind_address is '0.0.0.0': the native variant's servers run on the machine itself"),
    ("container_compare_native_bind_address=localhost",
     "container_compare_native_bind_address is 'localhost', not an IPv4 address"),
    ("container_compare_native_ftp_upload=false", "the native variant's FTP put needs anonymous uploads on this "
                                                  "machine's own vsftpd"),
    ("container_compare_native_mail=false", "the native variant's mail workload reconfigures this machine's own "
                                            "Postfix"),
]
BATCHES = one_run_per_batch(CASES)


@pytest.mark.parametrize("cases", BATCHES, ids=batch_ids(BATCHES))
def test_each_bad_input_is_one_sentence_before_any_host(tmp_path, cases):
    inventory = unreachable_inventory(tmp_path / "inventory", HOSTS)
    results = tmp_path / "results"
    proc = play("playbooks/container-compare.yml", *[a for extra, _ in cases for a in ("-e", extra)],
                inventory=inventory, results=results, timeout=300)
    assert_refused_with(proc, cases, results)


def test_the_unreachable_inventory_passes_the_checks(tmp_path):
    inventory = unreachable_inventory(tmp_path / "inventory", HOSTS)
    proc = play("playbooks/container-compare.yml", "--tags", "plan", inventory=inventory,
                results=tmp_path / "results", timeout=300)
    assert proc.returncode == 0, why(proc)
    assert "Plan:" in proc.stdout


def test_native_opt_ins_are_needed_only_for_what_is_measured(tmp_path):
    """Without the opt-ins, a run that measures neither FTP put nor mail natively is fine."""
    inventory = unreachable_inventory(tmp_path / "inventory", HOSTS.replace("true", "false"))
    proc = play("playbooks/container-compare.yml", "--tags", "plan", "-e",
                '{"container_compare_ftp_directions": ["get"], "container_compare_workloads": ["web", "ftp", "cpu"]}',
                inventory=inventory, results=tmp_path / "results", timeout=300)
    assert proc.returncode == 0, why(proc)
