# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loading a run directory for the report: run.json, the point documents, the problems found; point filters.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import os

from ansible.module_utils import testbed_results as results
from ansible.module_utils.testbed_reports.base import VERDICTS, ReportError
from ansible.module_utils.testbed_reports.model import json_key


def load_run(run_dir):
    """Return (run, docs, problems): run.json content, point documents, input notes.

    Reading is ``testbed_results.read_run_dir`` (the result store's own reader);
    this adds the report's checks.  Every document gets ``verdict`` (``valid``,
    ``invalid`` or ``fault``: its own optional field, else from ``valid``) and
    ``valid`` (true only for the verdict ``valid``).
    """
    if not os.path.isdir(run_dir):
        raise ReportError(f"{run_dir} is not a directory (give the run directory results/<experiment>/<run-id>)")
    found = results.read_run_dir(run_dir)
    if found["run_error"]:
        raise ReportError(found["run_error"])
    problems = []
    run = found["run"]
    if run is None:
        problems.append("run.json is missing; experiment, plan and report settings are unknown.")
        run = {}
    elif not isinstance(run, dict):
        raise ReportError("{} holds a {}, expected a JSON object".format(
            os.path.join(run_dir, "run.json"), type(run).__name__))

    docs = []
    for entry in found["files"]:
        name, doc = entry["name"], entry["doc"]
        if entry["error"] is not None:
            problems.append(f"{name} is not readable JSON ({entry['error']}); skipped.")
            continue
        if not isinstance(doc, dict) or "point_id" not in doc or not isinstance(doc.get("metrics"), dict):
            problems.append(f"{name} is not a point document (needs point_id and a metrics object); skipped.")
            continue
        if doc["point_id"] != name[:-5]:
            problems.append("{} holds point_id {!r}, which does not match its file name.".format(name, doc["point_id"]))
        if not isinstance(doc.get("parameters"), dict):
            if doc.get("parameters") is not None:
                problems.append(f"{name}: parameters is not an object; treated as empty.")
            doc["parameters"] = {}
        verdict = doc.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            problems.append("{}: verdict {!r} is not one of {}; its valid flag decides.".format(
                name, verdict, ", ".join(VERDICTS)))
            verdict = None
        if verdict is None:
            if not isinstance(doc.get("valid"), bool):
                problems.append(f"{name} has no true/false validity verdict; counted as invalid.")
                doc["valid"] = False
                doc["reasons"] = list(doc.get("reasons") or []) + ["the document carries no validity verdict"]
            verdict = "valid" if doc["valid"] else "invalid"
        elif isinstance(doc.get("valid"), bool) and doc["valid"] != (verdict == "valid"):
            problems.append(f"{name}: verdict {verdict!r} contradicts valid={str(doc['valid']).lower()}; "
                            "the verdict decides.")
        doc["verdict"] = verdict
        doc["valid"] = verdict == "valid"
        doc.setdefault("variant", "")
        doc["variant"] = "" if doc["variant"] is None else str(doc["variant"])
        docs.append(doc)
    if not docs:
        raise ReportError(f"no point documents in {run_dir} (expected <point-id>.json files with point_id and metrics); "
                          "nothing to report - has the run measured anything yet?")
    run_ids = sorted({str(d.get("run_id")) for d in docs})
    if len(run_ids) > 1:
        problems.append("documents come from {} runs ({}); they are reported together.".format(
            len(run_ids), ", ".join(run_ids)))
    if run.get("run_id") is not None and run_ids != [str(run["run_id"])]:
        problems.append("run.json names run {} but documents name {}.".format(run["run_id"], ", ".join(run_ids)))
    return run, docs, problems


def _lookup(doc, key):
    """(found, value) of a ``where`` key: variant, a parameter, an ``extra`` field (or parameters.k / extra.k)."""
    if key == "variant":
        return True, doc["variant"]
    for prefix, source in (("parameters.", doc["parameters"]), ("extra.", doc.get("extra"))):
        if key.startswith(prefix):
            return (isinstance(source, dict) and key[len(prefix):] in source,
                    source.get(key[len(prefix):]) if isinstance(source, dict) else None)
    if key in doc["parameters"]:
        return True, doc["parameters"][key]
    extra = doc.get("extra")
    if isinstance(extra, dict) and key in extra:
        return True, extra[key]
    return False, None


def matches(doc, where):
    """True when ``doc`` has every ``where`` key with that value (a list value: any of them)."""
    for key, wanted in (where or {}).items():
        found, value = _lookup(doc, key)
        if not found:
            return False
        options = wanted if isinstance(wanted, list) else [wanted]
        if json_key(value) not in {json_key(o) for o in options}:
            return False
    return True
