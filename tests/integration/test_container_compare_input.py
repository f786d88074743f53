"""container-compare checks its free-form settings on the controller before any guest is built.

All bad values in one run: the check reports every problem at once, one sentence
each, exit status 10, nothing written.
"""
import os

from playbook_run import exit_line, play, why

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
