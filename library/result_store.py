#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Store one measured point of a run in the result store."""

DOCUMENTATION = r"""
---
module: result_store
short_description: Write one measured point (metrics, verdict, environment, raw outputs) into a run
description:
  - Writes C(<run_dir>/<point_id>.json) atomically (temp file + rename), following
    C(schemas/result-point.schema.json), the raw tool outputs as
    C(<run_dir>/raw/<point_id>.<name>), then rebuilds C(index.json) from the point files.
  - Call it only after the point's measurement finished, so an interrupted point stays
    pending and the next M(result_run) lists it again.
  - Every document is validated with the JSON Schema the repository ships,
    C(schemas/result-point.schema.json), before anything is written. The module carries that
    schema with it (module_utils C(testbed_results.schemas)), so it works from any working directory
    and without C(ANSIBLE_CONFIG); C($TESTBED_SCHEMA_DIR) points it at another copy.
  - Refuses, with a sentence naming the field, a point that is not in the run's plan,
    metrics that are not a flat mapping of numbers, strings, booleans or null, NaN or
    Infinity anywhere, timestamps without a timezone, C(valid=false) without reasons,
    any other breach of the schema, and a point already stored (unless I(overwrite=true)).
  - Adds C(environment.controller.ansible_core_version), C(python_version) and
    C(hostname) of the controller when they are not given.
  - A write that fails (a full filesystem says so - "no space left on the filesystem of
    <run_dir>" - and how to resume) leaves no half-written document and no raw file of the
    point; the point stays pending. When only the derived C(index.json) could not be
    refreshed, the message says the point is stored.
  - "Runs on the controller; call it with C(delegate_to: localhost)."
version_added: "1.0.0"
author: Testbed contributors
requirements:
  - jsonschema (Python package, on the controller; in requirements.txt)
options:
  run_dir:
    description: The run directory returned by M(result_run) (C(run_dir)).
    type: path
    required: true
  point:
    description:
      - The point, as an item of M(result_run)'s C(pending) or C(points) (a mapping with
        C(variant), C(parameters), C(repetition); C(point_id) is checked against them),
        a mapping with only C(point_id), or the point id itself.
    type: raw
    required: true
  metrics:
    description:
      - Flat mapping metric name -> number, string, boolean or null; the unit goes in the
        name (C(_ms), C(_per_s), C(_pct)...). Null means the tool gave no value.
      - Units are derived from the names (numbers and nulls) and stored in C(units);
        strings and booleans get a null unit.
    type: dict
    required: true
  valid:
    description:
      - Verdict on the measurement. When omitted it is true exactly when every result in
        I(sources) is valid (then I(sources) is required).
    type: bool
  reasons:
    description:
      - "Sentences explaining C(valid=false). The reasons of invalid I(sources) are added
        as C(<source>: <reason>)."
    type: list
    elements: str
    default: []
  warnings:
    description: Odd but not disqualifying observations; the I(sources)' warnings are added the same way.
    type: list
    elements: str
    default: []
  environment:
    description:
      - Where the point was measured - a mapping with C(hosts) (inventory host name to the
        C(testbed_environment) fact of M(tool_versions)) and optionally C(controller).
      - A single host's C(testbed_environment) (it has C(hostname)) is accepted and put
        under its host name.
    type: dict
    required: true
  started_at:
    description:
      - When the measurement started - ISO 8601 with a timezone, or seconds since the epoch.
        Stored in UTC with a C(Z).
      - "In a playbook: C(now(utc=true, fmt='%Y-%m-%dT%H:%M:%S.%fZ')) or C(ansible_date_time.iso8601).
        C(now(utc=true).isoformat()) has no timezone and is refused."
    type: raw
    required: true
  finished_at:
    description: When the measurement finished, same forms as I(started_at); not before it.
    type: raw
    required: true
  raw:
    description:
      - Raw tool outputs to keep, name -> text; each is written to C(raw/<point_id>.<name>)
        (name of letters, digits, C(_ . -), e.g. C(httperf.txt), C(iperf3.json)).
    type: dict
  sources:
    description:
      - Parser results by name (the registered results or C(ansible_facts) of
        C(httperf_parse), C(iperf3_parse), M(cpu_sample)...). Their C(raw) key is dropped
        (keep raw text with I(raw)).
    type: dict
  extra:
    description: Free structured extras of the experiment, stored as they are.
    type: dict
  overwrite:
    description: Replace a point already stored (its stale raw files are removed).
    type: bool
    default: false
  replace_invalid:
    description:
      - Replace a point already stored only when it is an invalid measurement; the old document and its
        raw outputs move to C(superseded/<point_id>.<n>/) (a valid point is still refused).
      - The sweep sets it with C(-e testbed_remeasure_invalid=true).
    type: bool
    default: false
  fault:
    description:
      - "Store a lab fault instead of a result: C({evidence: ...}); the store numbers the attempt itself
        (the point's fault documents so far plus one; C(attempt: N) sets it). The point was measured
        across a broken lab component (a health check found it), so it is not a result: the document goes
        to C(<variant>__<parameters>__fault<N>__rep<R>.json) with C(verdict: fault) and the evidence, the raw outputs beside it,
        and the planned point stays pending, to be measured again after recovery."
      - The report lists fault documents in their own section, never in tables or charts.
    type: dict
notes:
  - Check mode does every check and returns the document without writing.
seealso:
  - module: result_run
  - module: cpu_sample
  - module: tool_versions
"""

EXAMPLES = r"""
- name: Store the point
  result_store:
    run_dir: "{{ run.run_dir }}"
    point: "{{ point }}"
    metrics: "{{ httperf_result.metrics | combine(cpu.metrics) }}"
    sources:
      httperf: "{{ httperf_result }}"
      cpu: "{{ cpu }}"
    raw:
      httperf.txt: "{{ httperf_run.stdout }}"
    environment:
      hosts: "{{ dict(groups['testbed'] | zip(groups['testbed'] | map('extract', hostvars, 'testbed_environment'))) }}"
    started_at: "{{ point_started }}"
    finished_at: "{{ now(utc=true, fmt='%Y-%m-%dT%H:%M:%S.%fZ') }}"
  delegate_to: localhost

- name: Store a point that could not be measured
  result_store:
    run_dir: "{{ run.run_dir }}"
    point: "{{ point.point_id }}"
    metrics: {}
    valid: false
    reasons: ["the director did not come up: {{ director_start.msg }}"]
    environment: "{{ testbed_environment }}"
    started_at: "{{ point_started }}"
    finished_at: "{{ now(utc=true, fmt='%Y-%m-%dT%H:%M:%S.%fZ') }}"
  delegate_to: localhost
"""

RETURN = r"""
path:
  description: Absolute path of the point document.
  returned: always
  type: str
  sample: /srv/testbed/results/lvs_compare/20261121T153000Z/wrr__rate-2000__rep1.json
point_id:
  description: The point's id.
  returned: always
  type: str
  sample: wrr__rate-2000__rep1
valid:
  description: The stored verdict.
  returned: always
  type: bool
  sample: true
document:
  description: The document as written (see C(schemas/result-point.schema.json)).
  returned: always
  type: dict
  sample:
    schema_version: 1
    experiment: lvs_compare
    run_id: 20261121T153000Z
    point_id: wrr__rate-2000__rep1
    variant: wrr
    parameters: {rate: 2000}
    repetition: 1
    metrics: {reply_rate_avg_per_s: 1999.6, cpu_busy_mean_pct: 41.2}
    units: {reply_rate_avg_per_s: 1/s, cpu_busy_mean_pct: "%"}
    valid: true
    reasons: []
    warnings: []
    environment: {hosts: {director: {hostname: director, kernel: 6.1.0-26-amd64}}, controller: {ansible_core_version: 2.19.4}}
    started_at: "2026-11-21T15:30:00Z"
    finished_at: "2026-11-21T15:30:41Z"
    duration_s: 41.0
    raw_files: [raw/wrr__rate-2000__rep1.httperf.txt]
    sources: {}
    extra: {}
"""

import os  # noqa: E402 (Ansible modules import after their documentation)

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_results import IndexWriteError, ResultError, write_error_message  # noqa: E402
from ansible.module_utils.testbed_results.store import (  # noqa: E402
    merge_source_verdicts,
    store_point,
    with_controller,
)


def _point_name(point):
    """The point's id as given (a mapping's point_id, or the id itself) for a message."""
    if isinstance(point, dict):
        return point.get("point_id") or "{} {}".format(point.get("variant"), point.get("parameters"))
    return str(point)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            run_dir=dict(type="path", required=True),
            point=dict(type="raw", required=True),
            metrics=dict(type="dict", required=True),
            valid=dict(type="bool"),
            reasons=dict(type="list", elements="str", default=[]),
            warnings=dict(type="list", elements="str", default=[]),
            environment=dict(type="dict", required=True),
            started_at=dict(type="raw", required=True),
            finished_at=dict(type="raw", required=True),
            raw=dict(type="dict"),
            sources=dict(type="dict"),
            extra=dict(type="dict"),
            overwrite=dict(type="bool", default=False),
            replace_invalid=dict(type="bool", default=False),
            fault=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    run_dir = os.path.abspath(params["run_dir"])
    try:
        valid, reasons, warnings = merge_source_verdicts(
            params["valid"], params["reasons"], params["warnings"], params["sources"])
        document = store_point(
            run_dir, params["point"], params["metrics"], valid, reasons, warnings,
            with_controller(params["environment"]), params["started_at"], params["finished_at"],
            raw=params["raw"], sources=params["sources"], extra=params["extra"],
            overwrite=params["overwrite"], write=not module.check_mode, fault=params["fault"],
            replace_invalid=params["replace_invalid"])
    except ResultError as exc:
        module.fail_json(msg=f"result_store: {exc}", run_dir=run_dir)
    except IndexWriteError as exc:
        module.fail_json(msg=f"result_store: the point is stored in {exc.doc_path}, but its index.json (derived from "
                             f"the point files) was not refreshed: {write_error_message(exc.cause, run_dir)}",
                         run_dir=run_dir, path=exc.doc_path)
    except OSError as exc:
        module.fail_json(msg=f"result_store: point {_point_name(params['point'])} was not stored: "
                             f"{write_error_message(exc, run_dir)}", run_dir=run_dir)
    module.exit_json(
        changed=not module.check_mode,
        path=os.path.join(run_dir, document["point_id"] + ".json"),
        point_id=document["point_id"],
        valid=document["valid"],
        document=document,
    )


if __name__ == "__main__":
    main()
