#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Open or resume a result run directory and print the plan."""

DOCUMENTATION = r"""
---
module: result_run
short_description: Open, resume or inspect a run of an experiment in the result store
description:
  - Creates or resumes C(<results_dir>/<experiment>/<run_id>/) and its C(run.json)
    (plan, plan hash, run parameters, report spec, plan history), then returns the
    plan with C(done) flags, the C(pending) points and a printable plan.
  - A point is done when its document C(<point_id>.json) exists (see M(result_store));
    the point files are the truth, C(index.json) is rebuilt from them.
  - With I(run_id=auto) the newest run of the experiment whose plan hash matches and
    whose I(run_parameters) are the same is resumed, finished or not, so running the
    same sweep again measures only what is missing (nothing once it is complete); when
    there is none a new run with a UTC timestamp id (C(20261121T153000Z)) is created.
    If a run with the same plan exists but was measured with other I(run_parameters),
    the new run is started and C(resume_note) (also a warning and the last line of
    C(plan_text)) names the keys that differ, old -> new.
  - I(run_id=new) always starts a new run.
  - An explicit I(run_id) is created, or resumed; if the plan changed, the new points
    are added to the run (points already there and their results are kept) and
    C(plan_history) in C(run.json) records the extension. If its I(run_parameters)
    differ the module fails, showing old and new values, unless I(force=true).
  - Run parameters are compared as canonical JSON after one normalisation, because
    Jinja gives the same setting as C(100), C("100") or C(100.0) depending on where it
    was set - a string holding a JSON number (C("100"), C("0.5"), C("1e3")) is that
    number and a float without fraction is the integer. Booleans, null and other
    strings compare exactly (C(true) is not C("true")), lists keep their order. The
    parameters are stored as given.
  - A C(run.json) of the experiment that cannot be read or is not a run file fails
    I(run_id=auto) with a message naming the file (it is never skipped silently).
  - When writing fails (on a full filesystem the message says "no space left on the
    filesystem of <results_dir>" and how to resume) a run directory made by this call is
    removed again, so no empty run is left behind.
  - "Runs on the controller; call it with C(delegate_to: localhost) and C(run_once: true)."
version_added: "1.0.0"
author: Testbed contributors
options:
  state:
    description:
      - C(open) creates or resumes the run (writes C(run.json) and C(index.json) when
        something changed).
      - C(status) only reads; it needs an existing run (explicit I(run_id), or C(auto)
        finds the newest run with the same plan, complete or not) and never writes.
      - C(documents) is C(status) and also returns RV(documents), every document of the run (results and
        lab faults), so that no caller needs to know the store's file names.
    type: str
    choices: [open, status, documents]
    default: open
  results_dir:
    description:
      - Root of the result store; the run lives in C(<results_dir>/<experiment>/<run_id>).
      - Give an absolute path (for example C("{{ playbook_dir }}/../results")); a relative
        one is relative to the controller's working directory.
    type: path
    required: true
  experiment:
    description: Experiment name (letters, digits, C(_ . + -)), the directory under I(results_dir).
    type: str
    required: true
  plan:
    description:
      - Every point of the experiment, each a mapping with C(variant) (string),
        C(parameters) (mapping, default empty) and C(repetition) (integer >= 0, default 1).
      - Point ids are deterministic (C(<variant>__<k1>-<v1>_<k2>-<v2>__rep<N>)), so a
        rerun finds the points already measured. Duplicate points are refused.
    type: list
    elements: dict
    required: true
  run_id:
    description:
      - C(auto) (resume the newest run with the same plan and the same I(run_parameters)),
        C(new) (start a new run), or an explicit run directory name to create or resume.
    type: str
    default: auto
  run_parameters:
    description:
      - Settings of the whole run that change its results (inventory kind, addresses,
        tool options, thresholds, durations...), stored in C(run.json).
      - They decide which run I(run_id=auto) resumes, and an explicit I(run_id) whose
        stored parameters differ is refused unless I(force=true).
      - When omitted nothing is compared and the stored parameters are kept.
    type: dict
  force:
    description:
      - Continue an explicit I(run_id) although its stored I(run_parameters) differ
        (C(-e testbed_run_id=<id> -e testbed_run_force=true) in the experiment playbooks).
      - The new parameters replace the stored ones; C(plan_history) gets a C(forced)
        entry with the time, the changed keys, the previous parameters and the previous
        plan hash.
      - Only valid with an explicit I(run_id).
    type: bool
    default: false
  provenance:
    description:
      - Where this invocation comes from (the C(testbed_provenance) lookup of roles/testbed_sweep - the testbed's
        commit and whether it had uncommitted changes, the command line, the extra vars, ansible-core and
        collection versions). Appended to C(invocations) in C(run.json) when it differs from the last one; every
        point stored afterwards carries it in C(environment.controller.provenance).
    type: dict
  remeasure_invalid:
    description:
      - List the points stored as invalid measurements as pending again (C(-e testbed_remeasure_invalid=true)
        in the experiment playbooks), so that a resumed run measures them again; the store keeps each old
        document under C(superseded/) (M(result_store) I(replace_invalid)). Fault documents never count.
    type: bool
    default: false
  report:
    description:
      - Free specification for C(scripts/testbed_report.py) (title, metrics, baseline...),
        stored in C(run.json); replaced like I(run_parameters).
    type: dict
  estimate_s_per_point:
    description:
      - Expected seconds per point, for the time estimate of the printed plan. When not
        given, the mean duration of the points already done in this run is used.
    type: float
notes:
  - Check mode computes the same answer without writing anything.
  - C(changed) is true only when a run was created, extended, its report updated or its
    parameters forced.
seealso:
  - module: result_store
  - module: cpu_sample
  - module: tool_versions
"""

EXAMPLES = r"""
- name: Open (or resume) the run
  result_run:
    results_dir: "{{ playbook_dir }}/../results"
    experiment: lvs_compare
    plan:
      - {variant: rr, parameters: {rate: 1000}, repetition: 1}
      - {variant: rr, parameters: {rate: 2000}, repetition: 1}
      - {variant: wrr, parameters: {rate: 1000}, repetition: 1}
      - {variant: wrr, parameters: {rate: 2000}, repetition: 1}
    run_parameters:
      duration_s: 30
    report:
      title: LVS schedulers
      metrics: [reply_rate_avg_per_s, response_time_ms]
    estimate_s_per_point: 40
  delegate_to: localhost
  run_once: true
  register: run

- name: Show the plan
  ansible.builtin.debug:
    msg: "{{ run.plan_text.split('\n') }}"
  run_once: true

- name: Measure every pending point
  ansible.builtin.include_tasks: point.yml
  loop: "{{ run.pending }}"
  loop_control:
    loop_var: point
    label: "{{ point.point_id }}"

- name: Continue a given run although a run parameter changed (recorded in plan_history)
  result_run:
    results_dir: "{{ playbook_dir }}/../results"
    experiment: lvs_compare
    run_id: 20261121T153000Z
    force: true
    plan: "{{ lvs_plan }}"
    run_parameters:
      duration_s: 60
  delegate_to: localhost
  run_once: true

- name: How far is a given run?
  result_run:
    state: status
    results_dir: /srv/testbed/results
    experiment: lvs_compare
    run_id: 20261121T153000Z
    plan: "{{ lvs_plan }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
run_id:
  description: The run's id (its directory name).
  returned: always
  type: str
  sample: 20261121T153000Z
run_dir:
  description: Absolute path of the run directory; pass it to M(result_store).
  returned: always
  type: str
  sample: /srv/testbed/results/lvs_compare/20261121T153000Z
experiment:
  description: The experiment name.
  returned: always
  type: str
  sample: lvs_compare
action:
  description: What happened to the run, C(created), C(resumed) or C(extended).
  returned: always
  type: str
  sample: resumed
plan_hash:
  description: sha256 of the run's plan (order-independent).
  returned: always
  type: str
  sample: 3f1c0a...e9
points:
  description: The requested plan, each point with its id and whether it is done (and valid).
  returned: always
  type: list
  elements: dict
  sample:
    - {point_id: wrr__rate-2000__rep1, variant: wrr, parameters: {rate: 2000}, repetition: 1, done: true, valid: true}
pending:
  description: The points of the requested plan still to measure (same shape as I(points)).
  returned: always
  type: list
  elements: dict
  sample:
    - {point_id: wrr__rate-4000__rep1, variant: wrr, parameters: {rate: 4000}, repetition: 1, done: false, valid: null}
done_count:
  description: Points of the requested plan already done.
  returned: always
  type: int
  sample: 12
total:
  description: Points in the requested plan.
  returned: always
  type: int
  sample: 30
run_total:
  description: Points in the run's plan (the union of all plans given to it).
  returned: always
  type: int
  sample: 30
plan_text:
  description: A few printable lines, e.g. "Plan - 30 points (10 variants x 3 parameter sets x 1 repetition), 12 done, 18 to run, estimated 9 min".
  returned: always
  type: str
  sample: "Run lvs_compare/20261121T153000Z (resumed)\nPlan: 30 points (10 variants × 3 parameter sets × 1 repetition),
    12 done, 18 to run, estimated 9 min\nVariants: rr, wrr"
resume_note:
  description:
    - Why I(run_id=auto) did not resume the newest run with the same plan - its
      I(run_parameters) differ (keys with old -> new values) - and how to continue it
      anyway; null when there was nothing to say.
  returned: always
  type: str
  sample: "not resuming run 20261121T153000Z (same plan): its run_parameters differ (inventory_kind: \"lab\" -> \"hardware\"); starting a new run. ..."
documents:
  description: With I(state=documents), every document of the run (point results and lab fault documents).
  returned: when I(state=documents)
  type: list
  elements: dict
"""

import os  # noqa: E402 (Ansible modules import after their documentation)

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_results import ResultError, open_run, write_error_message  # noqa: E402
from ansible.module_utils.testbed_results.store import run_documents  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["open", "status", "documents"], default="open"),
            results_dir=dict(type="path", required=True),
            experiment=dict(type="str", required=True),
            plan=dict(type="list", elements="dict", required=True),
            run_id=dict(type="str", default="auto"),
            run_parameters=dict(type="dict"),
            report=dict(type="dict"),
            estimate_s_per_point=dict(type="float"),
            force=dict(type="bool", default=False),
            remeasure_invalid=dict(type="bool", default=False),
            provenance=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    results_dir = os.path.abspath(params["results_dir"])
    status_only = params["state"] in ("status", "documents")
    try:
        result = open_run(
            results_dir, params["experiment"], params["plan"], run_id=params["run_id"],
            run_parameters=params["run_parameters"], report=params["report"],
            estimate_s_per_point=params["estimate_s_per_point"], force=params["force"],
            remeasure_invalid=params["remeasure_invalid"], provenance=params["provenance"],
            write=not (module.check_mode or status_only))
    except ResultError as exc:
        module.fail_json(msg=f"result_run: {exc}", experiment=params["experiment"])
    except OSError as exc:
        module.fail_json(msg=f"result_run: {write_error_message(exc, results_dir)}",
                         experiment=params["experiment"])
    if status_only and result["action"] == "created":
        module.fail_json(
            msg=f"result_run: no run of experiment {params['experiment']} matches"
                + (f" run_id {params['run_id']}" if params["run_id"] != "auto" else " this plan")
                + f" under {results_dir}; use state=open to create one"
                + (f" ({result['resume_note']})" if result["resume_note"] else ""),
            experiment=params["experiment"])
    if result["resume_note"]:
        module.warn(f"result_run: {result['resume_note']}")
    changed = result.pop("changed") and not status_only
    if params["state"] == "documents":
        result["documents"] = run_documents(result["run_dir"])
    module.exit_json(changed=changed, **result)  # pylint: disable=repeated-keyword  # "changed" was popped


if __name__ == "__main__":
    main()
