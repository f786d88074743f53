"""The shared runner's failure text leads with what failed (tests/playbook_run.py).

A playbook run inside a test that fails must say which task failed on which
host and why, before any tail of the output: the text an assertion shows.
"""
import pytest
from playbook_run import failures, play, why

PLAYBOOK = """
- name: A play with one broken host
  hosts: localhost
  gather_facts: false
  tasks:
    - name: A step that works
      ansible.builtin.debug:
        msg: fine
    - name: A step whose failure is ignored
      ansible.builtin.fail:
        msg: this one does not count
      ignore_errors: true
    - name: Start the servers
      ansible.builtin.fail:
        msg: vsftpd did not start (port 2121 in use)
"""


@pytest.mark.parametrize("callback", ["default", "ansible.builtin.json"])
def test_a_failing_task_leads_the_message_with_its_name_host_and_msg(tmp_path, callback):
    book = tmp_path / "broken.yml"
    book.write_text(PLAYBOOK)
    proc = play(str(book), inventory=None, env={"ANSIBLE_STDOUT_CALLBACK": callback})
    assert proc.returncode == 2
    assert failures(proc.stdout) == [("Start the servers", "localhost", "failed",
                                      "vsftpd did not start (port 2121 in use)")]
    text = why(proc, tail=100)
    head = text.split("--- stdout (tail) ---")[0]
    assert "  - [localhost] Start the servers (failed): vsftpd did not start (port 2121 in use)" in head
    assert "this one does not count" not in head


def test_a_passing_run_has_no_failures(tmp_path):
    book = tmp_path / "fine.yml"
    book.write_text("- name: Fine\n  hosts: localhost\n  gather_facts: false\n  tasks:\n"
                    "    - name: Fine\n      ansible.builtin.debug:\n        msg: ok\n")
    proc = play(str(book), inventory=None)
    assert proc.returncode == 0 and failures(proc.stdout) == []
