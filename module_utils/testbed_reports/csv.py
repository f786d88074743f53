# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""results.csv (one row per point), results_tidy.csv (one row per point and metric) and summary.csv
(per series x column x metric).

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import csv
import json

from ansible.module_utils.testbed_reports.base import CONFIDENCE
from ansible.module_utils.testbed_reports.model import is_finite_number
from ansible.module_utils.testbed_results import private_opener


def csv_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def write_results_csv(docs, path):
    """One row per point document; a ``verdict`` column when some point is a lab fault."""
    fixed = ["run_id", "point_id", "variant"]
    parameters = sorted({p for d in docs for p in d["parameters"]})
    with_verdict = any(d["verdict"] == "fault" for d in docs)
    metric_names = sorted({m for d in docs for m in d["metrics"]})
    taken = set(fixed + ["repetition", "valid", "reasons"] + (["verdict"] if with_verdict else []))
    param_cols = [p if p not in taken else f"param_{p}" for p in parameters]
    taken.update(param_cols)
    metric_cols = [m if m not in taken else f"metric_{m}" for m in metric_names]
    header = fixed + param_cols + ["repetition", "valid"] + (["verdict"] if with_verdict else []) + metric_cols
    header.append("reasons")
    with open(path, "w", encoding="utf-8", newline="", opener=private_opener) as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for doc in sorted(docs, key=lambda d: d["point_id"]):
            row = [doc.get("run_id"), doc["point_id"], doc["variant"]]
            row += [doc["parameters"].get(p) for p in parameters]
            row += [doc.get("repetition"), doc["valid"]] + ([doc["verdict"]] if with_verdict else [])
            row += [doc["metrics"].get(m) for m in metric_names]
            row.append("; ".join(str(r) for r in (doc.get("reasons") or [])))
            writer.writerow([csv_value(v) for v in row])


TIDY_FIXED = ("experiment", "run_id", "point_id", "variant")
TIDY_TAIL = ("repetition", "valid", "verdict", "metric", "value", "unit")


def write_tidy_csv(docs, path):
    """One row per point and numeric metric (the long form pandas' and R's tools start from): the
    point, every parameter as a column (``param_<name>`` where a name is taken), the repetition, its
    verdict, the metric, its value and unit. Non-numeric metrics stay in results.csv."""
    parameters = sorted({p for d in docs for p in d["parameters"]})
    taken = set(TIDY_FIXED + TIDY_TAIL)
    header = list(TIDY_FIXED) + [p if p not in taken else f"param_{p}" for p in parameters] + list(TIDY_TAIL)
    with open(path, "w", encoding="utf-8", newline="", opener=private_opener) as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for doc in sorted(docs, key=lambda d: d["point_id"]):
            head = [doc.get("experiment"), doc.get("run_id"), doc["point_id"], doc["variant"]]
            head += [doc["parameters"].get(p) for p in parameters]
            for metric in sorted(doc["metrics"]):
                value = doc["metrics"][metric]
                if not is_finite_number(value):
                    continue
                row = head + [doc.get("repetition"), doc["valid"], doc["verdict"], metric, value,
                              (doc.get("units") or {}).get(metric)]
                writer.writerow([csv_value(v) for v in row])


SUMMARY_FIELDS = ("n", "mean", "stdev", "ci_half", "ci_low", "ci_high", "min", "median", "max", "cv_pct")


def write_summary_csv(sections, path, titled=False):
    """Per section x series x x x metric statistics (raw intervals, never clipped); a section column when titled."""
    header = ["series", "variant", "x_param", "x", "metric", "unit", "points", "n_invalid", "n_missing"]
    header = (["section"] if titled else []) + header + list(SUMMARY_FIELDS) + ["confidence"]
    with open(path, "w", encoding="utf-8", newline="", opener=private_opener) as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for section in sections:
            model = section.model
            for metric in model.metrics:
                for skey in model.series:
                    for x in model.x_values:
                        cell = model.cell(skey, x, metric)
                        if cell is None:
                            continue
                        s = cell["summary"] or {}
                        row = [section.title] if titled else []
                        row += [model.label(skey), skey[0], model.x, x, metric, model.unit(metric), cell["docs"],
                                cell["n_invalid"], cell["n_missing"]]
                        row += [s.get(f) if s else (0 if f == "n" else None) for f in SUMMARY_FIELDS]
                        row.append(CONFIDENCE)
                        writer.writerow([csv_value(v) for v in row])
