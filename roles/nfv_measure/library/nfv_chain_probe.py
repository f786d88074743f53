#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the NFV chain's containers and their links in one module call (the sweep's health hook)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nfv_chain_probe
short_description: Read the state and the links of a chain's containers in one call
description:
  - For each named container, what M(community.docker.docker_container_info) gives (C(exists), and C(container),
    Docker's inspect document) - one C(docker inspect) for all of them - and, for each running container that
    is not paused, its links read inside it with C(sh) (the tool image has no Python) - one C(docker exec) each,
    C(<interface> <operstate> <carrier> <mac>) per interface but C(lo).
  - The results have the shapes of those modules' loop results (C(item) the container's name), so the role's
    filter C(nfv_health) judges them as it judged the loops - one module call per health check instead of two
    tasks per container (each an Ansible round trip, seconds on a busy or emulated host).
  - Never changes anything, never fails on a container that is missing or stopped (that is what it reports);
    fails only when the container engine's client is not found.
version_added: "1.0.0"
author: Testbed contributors
options:
  containers:
    description: The containers' names.
    type: list
    elements: str
    required: true
  engine:
    description: The container engine's client (on C(PATH), or a path).
    type: str
    default: docker
  timeout_s:
    description: Seconds each client call may take before it is counted as failed (a daemon that hangs).
    type: float
    default: 60
notes:
  - Supports check mode (it only reads).
"""

EXAMPLES = r"""
- name: Read the chain's containers and their links
  nfv_chain_probe:
    containers: [nfv-client, nfv-backend, nfv-vnf1]
  register: probe

- name: Judge them
  ansible.builtin.set_fact:
    health: "{{ probe.infos | nfv_health(probe.links) }}"
"""

RETURN = r"""
infos:
  description: One per container, in the order given - C(item) (the name), C(exists), C(container) (the inspect
    document, when it exists), C(failed) and C(msg) when the engine could not be asked.
  returned: always
  type: list
  elements: dict
links:
  description: One per running, unpaused container - C(item) (the name), C(rc), C(stdout) (the link lines), C(stderr).
  returned: always
  type: list
  elements: dict
"""

import json  # noqa: E402 (Ansible modules import after their documentation)
import subprocess  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

# one line per interface but lo: <interface> <operstate> <carrier> <mac> (carrier unreadable when down: -)
LINKS_SCRIPT = ('for i in /sys/class/net/*; do n=${i##*/}; [ "$n" = lo ] && continue; '
                'echo "$n $(cat "$i/operstate") $(cat "$i/carrier" 2>/dev/null || echo -) $(cat "$i/address")"; done')


def run_client(argv, timeout_s):
    """``(rc, stdout, stderr)`` of one client call; a call past ``timeout_s`` is killed and counted as rc 124."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return 124, "", "%s did not answer within %s s" % (argv[0], timeout_s)
    return proc.returncode, proc.stdout, proc.stderr


def probe(containers, engine="docker", timeout_s=60, run=run_client):
    """``{infos, links}`` for ``containers`` (see RETURN), asking the engine with ``run(argv, timeout_s)``."""
    names = [str(name) for name in containers]
    rc, out, err = run([engine, "inspect", "--type", "container"] + names, timeout_s) if names else (0, "[]", "")
    try:   # "[]" when none exists (rc 1); nothing at all when the daemon could not be asked
        documents = json.loads(out) if (out or "").strip() else None
    except ValueError:
        documents = None
    if not isinstance(documents, list):
        # the client printed no inspect documents: the engine could not be asked at all
        msg = (err or out or "rc %s" % rc).strip()[:300]
        return {"infos": [{"item": name, "failed": True, "msg": msg} for name in names], "links": []}
    found = {str(doc.get("Name", "")).lstrip("/"): doc for doc in documents if isinstance(doc, dict)}
    infos, links = [], []
    for name in names:
        doc = found.get(name)
        infos.append({"item": name, "exists": doc is not None, "container": doc or {}})
        state = (doc or {}).get("State") or {}
        if state.get("Running") and not state.get("Paused"):
            lrc, lout, lerr = run([engine, "exec", name, "sh", "-c", LINKS_SCRIPT], timeout_s)
            links.append({"item": name, "rc": lrc, "stdout": lout, "stderr": lerr})
    return {"infos": infos, "links": links}


def main():
    module = AnsibleModule(
        argument_spec={
            "containers": {"type": "list", "elements": "str", "required": True},
            "engine": {"type": "str", "default": "docker"},
            "timeout_s": {"type": "float", "default": 60},
        },
        supports_check_mode=True,
    )
    engine = module.get_bin_path(module.params["engine"])
    if not engine:
        module.fail_json(msg="the container engine's client %r is not on PATH: install it, or give its path as engine"
                         % module.params["engine"])
    result = probe(module.params["containers"], engine, module.params["timeout_s"])
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
