# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every tool's parser by the tool's name: module tool_parse on a host, action testbed_load on the controller."""
from __future__ import absolute_import, division, print_function

import inspect

from ansible.module_utils.testbed_parse_ab import parse as parse_ab
from ansible.module_utils.testbed_parse_ceph import parse as parse_ceph
from ansible.module_utils.testbed_parse_curl import parse as parse_curl
from ansible.module_utils.testbed_parse_docker_stats import parse as parse_docker_stats
from ansible.module_utils.testbed_parse_fio import parse as parse_fio
from ansible.module_utils.testbed_parse_hpcc import parse as parse_hpcc
from ansible.module_utils.testbed_parse_httperf import parse as parse_httperf
from ansible.module_utils.testbed_parse_iozone import parse as parse_iozone
from ansible.module_utils.testbed_parse_iperf3 import parse as parse_iperf3
from ansible.module_utils.testbed_parse_ipvsadm import parse as parse_ipvsadm
from ansible.module_utils.testbed_parse_lftp import parse as parse_lftp
from ansible.module_utils.testbed_parse_netperf import parse as parse_netperf
from ansible.module_utils.testbed_parse_nuttcp import parse as parse_nuttcp
from ansible.module_utils.testbed_parse_ping import parse as parse_ping
from ansible.module_utils.testbed_parse_postal import parse as parse_postal
from ansible.module_utils.testbed_parse_sockperf import parse as parse_sockperf
from ansible.module_utils.testbed_parse_sysbench import parse as parse_sysbench
from ansible.module_utils.testbed_parse_xz import parse as parse_xz
from ansible.module_utils.testbed_parse_zpool import parse as parse_zpool

PARSERS = {
    "ab": parse_ab,
    "ceph": parse_ceph,
    "curl": parse_curl,
    "docker_stats": parse_docker_stats,
    "fio": parse_fio,
    "hpcc": parse_hpcc,
    "httperf": parse_httperf,
    "iozone": parse_iozone,
    "iperf3": parse_iperf3,
    "ipvsadm": parse_ipvsadm,
    "lftp": parse_lftp,
    "netperf": parse_netperf,
    "nuttcp": parse_nuttcp,
    "ping": parse_ping,
    "postal": parse_postal,
    "sockperf": parse_sockperf,
    "sysbench": parse_sysbench,
    "xz": parse_xz,
    "zpool": parse_zpool,
}


def parser_options(tool):
    """The option names a tool's parser takes besides text and source."""
    names = list(inspect.signature(PARSERS[tool]).parameters)
    return [name for name in names if name not in ("text", "source")]
