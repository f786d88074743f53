# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guests' ownership filter (module_utils/testbed_guest_ownership.py).

    {{ __info.container | guest_ownership('docker', runtime_docker_guest_name, inventory_hostname) }}
    {{ __network | guest_ownership('lxd_network', runtime_lxd_network, inventory_hostname,
                                   recorded=__record.stat.exists, record=__record.stat.path) }}
    {{ __net | guest_ownership('lab_network', item.name, inventory_hostname, bridge=item.bridge) }}

gives ``{"owner": "absent"|"ours"|"foreign", "remove": bool, "problem": "<one sentence>" or ""}``;
``{{ __info.results | lab_network_ownership(__links, lab_network_networks, lab_network_taps,
inventory_hostname) }}`` gives the lab networks' and taps' decisions and the refusals;
``lxc_guest_marker`` gives the text of the marker runtime_lxc writes into a new guest's directory.
The code (and its documentation) is in module_utils/testbed_guest_ownership.py.
"""
import os

# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible.module_utils.testbed_guest_ownership import (  # noqa: E402
    OwnershipError,
    decide,
    lab_objects,
    render_lxc_marker,
)


def guest_ownership(inspected, kind, name, host, variable=None, recorded=None, record=None, bridge=None):
    """{owner, remove, problem} of the object ``inspected`` (None or empty: there is none)."""
    try:
        return decide(kind, name, inspected, host, variable=variable, recorded=recorded, record=record, bridge=bridge)
    except OwnershipError as exc:
        raise AnsibleFilterError("guest_ownership: %s" % exc) from None


def lab_network_ownership(inspected, links, networks, taps, host):
    """{networks: {name: decision}, taps: {name: decision}, problems: [...]} of the lab's networks and taps."""
    try:
        return lab_objects(networks, taps, inspected, links, host)
    except OwnershipError as exc:
        raise AnsibleFilterError("lab_network_ownership: %s" % exc) from None


def lxc_guest_marker(name):
    """The text of ``<lxc_path>/<name>/testbed-guest.json``."""
    return render_lxc_marker(name)


class FilterModule:
    """Guest ownership filters."""

    def filters(self):
        return {"guest_ownership": guest_ownership, "lab_network_ownership": lab_network_ownership,
                "lxc_guest_marker": lxc_guest_marker}
