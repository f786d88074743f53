"""nfv-chain checks every setting on the controller before the run is opened or a container made.

Each bad input - of nfv_measure (the experiment) or of a role it builds the chain with (nfv_chain,
nfv_image, the VNF roles) - stops in seconds with exit status 10 and one sentence naming the setting
and how to fix it; nothing is written (no run directory). The Docker host is 127.0.0.1 port 1 over
ssh, so a run that went past the checks could not reach it; with nfv_chain_state=absent the check
still comes before the removal.
"""
import pytest
from playbook_run import assert_refused_with, batch_ids, one_run_per_batch, play, unreachable_inventory, why

HOSTS = """
all:
  children:
    nfv_docker_host:
      hosts:
        docker1: {}
"""


# One bad setting each; settings of different variables share a run (playbook_run.one_run_per_batch).
CASES = [
    ("nfv_measure_streams=0", "nfv_measure_streams must be at least 1, got 0"),
    ("nfv_measure_streams=999", "nfv_measure_streams must be at most 128, got 999"),
    ("nfv_measure_ping_interval_s=0", "nfv_measure_ping_interval_s must be at least 0.002, got 0"),
    ("nfv_measure_stream=2", "unknown variable nfv_measure_stream: did you mean nfv_measure_streams?"),
    ("nfv_measure_protocol=sctp", "nfv_measure_protocol is 'sctp', which is not one of tcp, udp"),
    ("nfv_measure_repetitions=5000", "nfv_measure_repetitions must be at most 1000, got 5000"),
    ("nfv_measure_udp_bitrate=fast", "nfv_measure_udp_bitrate is 'fast', not an iperf3 bit rate such as 500M or 1G"),
    ("nfv_measure_sockperf_msg_size=70000", "nfv_measure_sockperf_msg_size must be at most 65507, got 70000"),
    ("nfv_chain_cleanp=false", "unknown variable nfv_chain_cleanp: did you mean nfv_chain_cleanup?"),
    ("nfv_chain_iperf3_port=22", "nfv_chain_iperf3_port is 22: port 22 is sshd's"),
    ("nfv_chain_sockperf_port=70000", "nfv_chain_sockperf_port must be at most 65535, got 70000"),
    ("nfv_chain_segments_per_scenario=0", "nfv_chain_segments_per_scenario must be at least 2, got 0"),
    ("nfv_chain_left_host=300", "nfv_chain_left_host must be at most 254, got 300"),
    ("nfv_chain_subnet_prefix=10.231.0.0/16", "nfv_chain_subnet_prefix is '10.231.0.0/16', not the first two octets"),
    ("nfv_chain_config_dir=/", "nfv_chain_config_dir is '/', not an absolute path other than /"),
    ("nfv_chain_state=gone", "nfv_chain_state is 'gone', which is not one of present, absent"),
    ("nfv_image_build_dir=build", "nfv_image_build_dir is 'build', not an absolute path other than /"),
    ("nfv_loadbalancer_maxconn=0", "nfv_loadbalancer_maxconn must be at least 1, got 0"),
    ("nfv_firewall_config_dir=etc", "nfv_firewall_config_dir is 'etc', not an absolute path other than /"),
    ("nfv_backend_ready_timeout_s=999999", "nfv_backend_ready_timeout_s must be at most 3600, got 999999"),
]
BATCHES = one_run_per_batch(CASES)


@pytest.mark.parametrize("cases", BATCHES, ids=batch_ids(BATCHES))
def test_bad_input_stops_before_anything_is_written(tmp_path, cases):
    inventory = unreachable_inventory(tmp_path / "inventory", HOSTS)
    results = tmp_path / "results"
    proc = play("playbooks/nfv-chain.yml", *[a for extra, _ in cases for a in ("-e", extra)],
                inventory=inventory, results=results, timeout=600)
    assert_refused_with(proc, cases, results)


@pytest.mark.parametrize("absent", ["testbed_state=absent", "nfv_chain_state=absent"])
def test_removing_the_chain_checks_the_settings_first(tmp_path, absent):
    """testbed_state=absent (or its older spelling) touches the host: a typo beside it stops the run before that."""
    inventory = unreachable_inventory(tmp_path / "inventory", HOSTS)
    proc = play("playbooks/nfv-chain.yml", "-e", absent, "-e", "nfv_chain_nmae=mine",
                inventory=inventory, results=tmp_path / "results", timeout=600)
    assert proc.returncode == 10, why(proc)
    assert "unknown variable nfv_chain_nmae: did you mean nfv_chain_name?" in proc.stdout, why(proc)
    assert "TASK [Only remove what the experiment builds" not in proc.stdout, why(proc)


def test_the_unreachable_inventory_passes_the_checks(tmp_path):
    inventory = unreachable_inventory(tmp_path / "inventory", HOSTS)
    proc = play("playbooks/nfv-chain.yml", "--tags", "plan", inventory=inventory, results=tmp_path / "results",
                timeout=600)
    assert proc.returncode == 0, why(proc)
    assert "Plan:" in proc.stdout
