#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Evaluate one point of the LVS scheduler comparison (the sweep stores it)."""

DOCUMENTATION = r"""
---
module: lvs_point
short_description: Turn one LVS load point's raw outputs into a result document
description:
  - Parses every httperf process report of the point with the project's httperf parser
    (each with its own requested rate, so each keeps its validity verdict), sums and
    weights them into the point's totals, reads the director's per-real-server
    connection counters (C(ipvsadm -Ln --stats --exact), parsed by the ipvsadm parser)
    into counts and Jain's fairness index, and cuts each host's CPU figures out of the
    continuous sampler's lines for the load window.
  - The point is valid when every httperf process is valid, the processes together
    reached I(min_rate_ratio) of the requested rate, errors stay at or below
    I(max_error_pct) and the director's counters were read. A load client or real server
    that failed shows up as reasons or warnings, never as a silent number.
  - Writes nothing. RV(result) is the point as M(result_store) takes it; the sweep
    (C(roles/testbed_sweep), C(tasks_from=store)) is the one writer of every point, and
    probes the lab first when the point is suspect (a lab fault is not a result).
  - "Runs on the controller (C(delegate_to: localhost), C(run_once: true))."
version_added: "1.0.0"
author: Testbed contributors
options:
  point:
    description: The planned point, a mapping with C(variant), C(parameters) and C(repetition).
    type: dict
    required: true
  clients:
    description:
      - One entry per load client host, C({host, stdout, failed, msg}), C(stdout) being
        the JSON printed by the C(lvs-httperf-run) runner of the C(lvs_client) role.
    type: list
    elements: dict
    required: true
  collect:
    description:
      - Per host, C({role, stdout, failed, msg}) with role C(director), C(real_server) or
        C(client); C(stdout) holds C(=== ipvsadm-stats) (director) and C(=== cpu) sections.
    type: dict
    required: true
  director_counters:
    description:
      - The director's counter read for this point, C(=== ipvsadm-stats) (+ C(=== zeroed-at))
        sections as printed by C(lvs-director-stats) (the sections may be prefixed C(prev-)).
      - A sweep reads the counters once the 2 s IPVS estimator has ticked after the load, in
        the step that also starts the next point's collection, and stores each point one step
        later. Without this option the director's I(collect) entry must hold the sections.
    type: str
  clock_offsets:
    description:
      - "Each host's clock minus the controller's, C({host: {offset_s, uncertainty_s}}) as the
        C(clock_offset) action returns it (a plain number of seconds is accepted too)."
      - The clients' load times, every host's CPU samples and the director's counter reset are
        put on the controller's time line with it; hosts not listed count as in step.
    type: dict
    default: {}
  counters_zeroed_at:
    description:
      - Epoch time, on the director's clock, the director's counters were zeroed before this point
        (checked against the load's start once both are on the controller's time line).
    type: float
  read_after:
    description:
      - Set when the director's counter read was started during the load, on a timetable of the IPVS
        estimator's tick - the time (controller's time line) it waited for (the load's expected end plus a
        tolerance). Then the point is checked for a clean boundary (module_utils/testbed_timetable) -
        the load ended before the tick its counts were read after, I(next_start) came after it, the
        zeroing before the following tick - and when not, RV(retry) is set and nothing is written.
    type: float
  next_start:
    description: When the next load was set to start (controller's time line); null when none was launched before this read.
    type: float
  tick_period:
    description: The estimator's period (s), as measured from its ticks.
    type: float
    default: 2.0
  switch_to:
    description:
      - The scheduler the director's read switched to right after reading this point (the next segment's
        first load was launched during this one). When that switch failed or came after I(next_start),
        RV(retry_next) says why and the next point is to be measured again; this point's counts were read
        before the switch.
    type: str
  real_servers:
    description: The real servers, C({host, address, port, weight}).
    type: list
    elements: dict
    required: true
  vip:
    description: Virtual IP of the service.
    type: str
    required: true
  port:
    description: Port of the virtual service.
    type: int
    default: 80
  requested_rate:
    description: The point's total requested connection rate (conn/s) over all clients; default the point's C(parameters.rate).
    type: float
  num_conns:
    description: The point's total number of connections over all clients; default the point's C(parameters.num_conns).
    type: int
  min_rate_ratio:
    description: Smallest achieved/requested rate ratio of a valid run.
    type: float
    default: 0.9
  max_error_pct:
    description: Largest share of failed connections (percent) of a valid run.
    type: float
    default: 1.0
  max_client_cpu_pct:
    description: httperf CPU (percent of one CPU) at or above which a process is client-bound.
    type: float
    default: 95.0
  environment:
    description: "C({hosts: {name: testbed_environment}, controller: {...}}) for the document."
    type: dict
    required: true
  label:
    description: Progress label of the point, e.g. C([7/30] wrr @ 200 conn/s rep 1).
    type: str
    default: ""
  extra:
    description: Extra mapping stored in the document (scheduler table, settings...).
    type: dict
  watchdog:
    description:
      - "The watchdog's finding when it stopped this point's load (a real server stopped answering during it):
        the sentence that starts C(stopped the load N s in:) and names each silent server with its address and port."
      - The point is then invalid with the reason C(the watchdog <finding>), first; the sweep probes the lab and
        stores it as a fault naming the component.
    type: str
    default: ""
notes:
  - In check mode the document is computed and checked but nothing is written.
seealso:
  - module: httperf_parse
  - module: ipvsadm_parse
  - module: result_store
"""

EXAMPLES = r"""
- name: Evaluate the point (then hand lvs_stored.result to the sweep's store)
  lvs_point:
    point: "{{ lvs_point }}"
    clients: "{{ groups['lvs_clients'] | map('extract', hostvars, '__lvs_run_out') | list }}"
    collect: "{{ lvs_collect }}"
    real_servers: "{{ lvs_real_servers }}"
    vip: 10.250.1.10
    requested_rate: 200
    num_conns: 3000
    environment: "{{ lvs_environment }}"
    label: "[3/30] rr @ 200 conn/s rep 1"
  delegate_to: localhost
  run_once: true
  register: lvs_stored
"""

RETURN = r"""
retry:
  description:
    - The counts are not exact (a timetabled read, I(read_after)) - this point and the next one are to be measured
      again; not to be stored. RV(retry_reasons) says why.
  returned: success
  type: bool
retry_reasons:
  description: Why the counts are not exact (empty unless RV(retry)).
  returned: success
  type: list
  elements: str
retry_next:
  description:
    - Why the next point's load did not run on its scheduler from its start (the switch of I(switch_to) failed
      or came late); empty when it did. That point is to be measured again.
  returned: success
  type: list
  elements: str
timetable:
  description:
    - With I(read_after), the boundary as measured (also kept in the point document's C(details.timetable)) -
      read_after, next_start and load_end on the controller's time line, the director's tick-at, zeroed-at and
      settled lines, the period.
  returned: success
  type: dict
result:
  description:
    - The point as M(result_store) takes it (point, metrics, valid, reasons, warnings, sources, raw, extra,
      environment, started_at, finished_at) and C(suspect) - invalid or with failed connections, so the sweep
      probes the lab before storing it.
  returned: success
  type: dict
point_id:
  description: Id of the point.
  returned: success
  type: str
  sample: wrr__num_conns-3000_rate-200__rep1
valid:
  description: The point's verdict.
  returned: success
  type: bool
  sample: true
reasons:
  description: Why the point is not valid.
  returned: success
  type: list
  elements: str
  sample: []
warnings_list:
  description: Warnings of the point (sources' warnings prefixed with their name).
  returned: success
  type: list
  elements: str
  sample: []
metrics:
  description: The point's metrics (units in the names).
  returned: success
  type: dict
  sample: {connection_rate_per_s: 199.8, response_time_ms: 1.4, fairness_jain: 0.9999}
load_seconds:
  description: Wall time of the load (first httperf start to last httperf end over all clients).
  returned: success
  type: float
  sample: 15.21
msg:
  description: One progress line for the point.
  returned: success
  type: str
  sample: "[3/30] rr @ 200 conn/s rep 1: valid, 199.8 of 200 conn/s, response 1.4 ms, 0 errors, Jain 1.000, director CPU 41 %"
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_lvs import PointError, evaluate_point, summary_line  # noqa: E402
from ansible.module_utils.testbed_results import ResultError, point_id  # noqa: E402
from ansible.module_utils.testbed_results.store import merge_source_verdicts, with_controller  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            point=dict(type="dict", required=True),
            clients=dict(type="list", elements="dict", required=True),
            collect=dict(type="dict", required=True),
            real_servers=dict(type="list", elements="dict", required=True),
            director_counters=dict(type="str"),
            counters_zeroed_at=dict(type="float"),
            read_after=dict(type="float"),
            next_start=dict(type="float"),
            tick_period=dict(type="float", default=2.0),
            switch_to=dict(type="str"),
            clock_offsets=dict(type="dict", default={}),
            vip=dict(type="str", required=True),
            port=dict(type="int", default=80),
            requested_rate=dict(type="float"),
            num_conns=dict(type="int"),
            min_rate_ratio=dict(type="float", default=0.9),
            max_error_pct=dict(type="float", default=1.0),
            max_client_cpu_pct=dict(type="float", default=95.0),
            environment=dict(type="dict", required=True),
            label=dict(type="str", default=""),
            extra=dict(type="dict"),
            watchdog=dict(type="str", default=""),
        ),
        supports_check_mode=True,
    )
    p = module.params
    parameters = p["point"].get("parameters") if isinstance(p["point"].get("parameters"), dict) else {}
    for option, key, kind in (("requested_rate", "rate", float), ("num_conns", "num_conns", int)):
        if p[option] is None:
            try:
                p[option] = kind(parameters[key])
            except (KeyError, TypeError, ValueError):
                module.fail_json(msg="lvs_point: %s is not given and the point's parameters have no usable %s (%r): "
                                     "give %s, or a point planned with %s" % (option, key, parameters.get(key), option, key))
    try:
        result = evaluate_point(
            p["clients"], p["collect"], p["real_servers"], p["vip"], p["port"], p["requested_rate"],
            p["num_conns"], min_rate_ratio=p["min_rate_ratio"], max_error_pct=p["max_error_pct"],
            max_client_cpu_pct=p["max_client_cpu_pct"], director_counters=p["director_counters"],
            counters_zeroed_at=p["counters_zeroed_at"], clock_offsets=p["clock_offsets"],
            read_after=p["read_after"], next_start=p["next_start"], tick_period=p["tick_period"],
            switch_to=p["switch_to"], watchdog=p["watchdog"])
        valid, reasons, warnings = merge_source_verdicts(
            False if result["reasons"] else None, result["reasons"], result["warnings"], result["sources"])
        extra = dict(p["extra"] or {})
        extra["details"] = result["details"]
        ident = point_id(p["point"].get("variant"), p["point"].get("parameters"), p["point"].get("repetition", 1))
        errors = result["metrics"].get("errors_total") or 0
        # The point as result_store takes it; the sweep (roles/testbed_sweep, store) writes it, after
        # probing the lab first when it is suspect (a lab fault is not a result).
        document = {
            "point": p["point"], "metrics": result["metrics"], "valid": valid, "reasons": reasons,
            "warnings": warnings, "sources": result["sources"], "raw": result["raw"], "extra": extra,
            "environment": with_controller(p["environment"]), "started_at": result["started"],
            "finished_at": result["finished"], "suspect": not valid or errors > 0}
    except PointError as exc:
        module.fail_json(msg="lvs_point: %s" % exc)
    except ResultError as exc:
        module.fail_json(msg="lvs_point: %s" % exc)
    except (KeyError, TypeError, ValueError) as exc:
        module.fail_json(msg="lvs_point: unusable input (%s: %s)" % (type(exc).__name__, exc))
    module.exit_json(
        changed=False,
        retry=bool(result["retry"]),
        retry_reasons=result["retry"],
        retry_next=result["retry_next"],
        timetable=result["details"].get("timetable"),
        result=document,
        point_id=ident,
        valid=valid,
        reasons=reasons,
        warnings_list=warnings,
        metrics=result["metrics"],
        load_seconds=result["load_seconds"],
        msg=summary_line(p["label"] or ident, result["metrics"], valid, reasons),
    )


if __name__ == "__main__":
    main()
