"""nfv-chain checks every nfv_measure_ setting on the controller before the run is opened or a container made.

Each bad input stops in seconds with exit status 10 and one sentence naming the setting and how to fix it;
nothing is written (no run directory).
"""
import os

import pytest
from playbook_run import exit_line, play, why


@pytest.mark.parametrize("extra, sentence", [
    ("nfv_measure_streams=0", "nfv_measure_streams must be at least 1, got 0"),
    ("nfv_measure_streams=999", "nfv_measure_streams must be at most 128, got 999"),
    ("nfv_measure_ping_interval_s=0", "nfv_measure_ping_interval_s must be at least 0.002, got 0"),
    ("nfv_measure_stream=2", "unknown variable nfv_measure_stream: did you mean nfv_measure_streams?"),
    ("nfv_measure_protocol=sctp", "nfv_measure_protocol"),
])
def test_bad_input_stops_before_anything_is_written(tmp_path, extra, sentence):
    proc = play("playbooks/nfv-chain.yml", "-e", extra, results=tmp_path, timeout=120)
    assert proc.returncode == 10, why(proc)
    last = exit_line(proc)
    assert last.startswith("Exit status 10 (refused): input refused before any host was touched") and sentence in last
    assert not os.listdir(tmp_path)
