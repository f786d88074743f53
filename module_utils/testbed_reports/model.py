# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's model: series x columns x metrics, built from the point documents.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import json
import math

from ansible.module_utils.testbed_reports.base import CONFIDENCE, ReportError
from ansible.module_utils.testbed_stats import core as stats


def json_key(value):
    """Hashable, order-stable key for a JSON value."""
    return json.dumps(value, sort_keys=True)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite_number(value):
    return _is_number(value) and not (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))


def value_label(value):
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def name_list(value, what):
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ReportError(f"{what} must be a list of names, got {value!r}")


def _determined(docs, name, by):
    """True when parameter ``name`` has one value per (variant, value of ``by``)."""
    seen = {}
    for doc in docs:
        group = (doc["variant"], json_key(doc["parameters"].get(by)))
        value = json_key(doc["parameters"].get(name))
        if seen.setdefault(group, value) != value:
            return False
    return True


class Model:
    """Docs grouped by series (variant + other varying parameters) and x value."""

    def __init__(self, run, docs, x=None, metrics=None, include_invalid=False, auto_x=True):
        self.run = run
        self.docs = docs
        self.include_invalid = include_invalid
        self.notes = []

        params = {}
        for doc in docs:
            for name, value in doc["parameters"].items():
                params.setdefault(name, set()).add(json_key(value))
        self.parameters = sorted(params)
        varying = [name for name in self.parameters
                   if len(params[name]) > 1 or any(name not in d["parameters"] for d in docs)]

        if x is None and varying and auto_x:
            # the x axis is the varying parameter that determines all the others (per variant)
            candidates = [p for p in varying
                          if all(_determined(docs, other, p) for other in varying if other != p)]
            if len(candidates) == 1:
                x = candidates[0]
                self.notes.append(f"x axis: `{x}`, chosen because the other varying parameters follow it "
                                  "(set report.x or --x to choose another).")
            elif len(candidates) > 1:
                self.notes.append("no x axis: {} vary together; set report.x or --x to pick one.".format(
                    ", ".join(f"`{c}`" for c in candidates)))
        if x is not None and x not in params:
            raise ReportError("x parameter {!r} is not a parameter of any point (parameters: {})".format(
                x, ", ".join(self.parameters) or "none"))
        self.x = x
        # Parameters that vary but follow (variant, x) - num_conns = rate x duration, say - are
        # listed, not turned into extra series.
        self.dependent = [name for name in varying if name != x and x and _determined(docs, name, x)]
        self.extra = [name for name in varying if name != x and name not in self.dependent]

        xs = {}
        for doc in docs:
            value = doc["parameters"].get(x) if x else None
            xs.setdefault(json_key(value), value)
        present = [v for v in xs.values() if v is not None]
        self.x_numeric = bool(x) and bool(present) and all(is_finite_number(v) for v in present)
        if self.x_numeric:
            self.x_values = sorted(present)
        else:
            self.x_values = sorted(present, key=value_label)
        if None in xs.values():
            self.x_values.append(None)

        # series: variant + the other varying parameters, ordered like the plan
        order = self._variant_order()
        self.series = []
        self.series_info = {}
        self.cells = {}
        for doc in docs:
            extra = tuple((name, json_key(doc["parameters"].get(name))) for name in self.extra)
            skey = (doc["variant"], extra)
            if skey not in self.series_info:
                label = doc["variant"] or "(no variant)"
                if self.extra:
                    label += " ({})".format(", ".join(
                        "{}={}".format(name, value_label(doc["parameters"].get(name))) for name in self.extra))
                self.series_info[skey] = {"variant": doc["variant"], "label": label,
                                          "extra": {n: doc["parameters"].get(n) for n in self.extra}}
                self.series.append(skey)
            xk = json_key(doc["parameters"].get(x) if x else None)
            self.cells.setdefault((skey, xk), []).append(doc)
        self.series.sort(key=lambda s: (order.get(s[0], len(order)), s[0], s[1]))
        self.variants = []
        for skey in self.series:
            if skey[0] not in self.variants:
                self.variants.append(skey[0])

        # metrics: numeric ones get statistics, the others a table of values
        found = {}
        for doc in docs:
            for name, value in doc["metrics"].items():
                kinds = found.setdefault(name, set())
                if value is None:
                    continue
                kinds.add("number" if is_finite_number(value) else "other")
        wanted = name_list(metrics, "metrics")
        if wanted is None:
            wanted = sorted(found)
        else:
            unknown = [m for m in wanted if m not in found]
            if unknown:
                raise ReportError("metric(s) {} not found in any point (metrics: {})".format(", ".join(unknown), ", ".join(sorted(found)) or "none"))
        self.metrics = [m for m in wanted if found[m] == {"number"}]
        self.text_metrics = [m for m in wanted if "other" in found[m]]
        empty = [m for m in wanted if not found[m]]
        if empty:
            self.notes.append("no point has a value for: {}.".format(", ".join(f"`{m}`" for m in empty)))
        self.units = {}
        for doc in docs:
            for name, unit in (doc.get("units") or {}).items():
                if unit and name not in self.units:
                    self.units[name] = unit
        # intervals shown clipped at 0: metrics whose name says they cannot be negative and none is
        self.clip = {m: stats.non_negative_metric(m) and all(
            d["metrics"].get(m) >= 0 for d in docs if is_finite_number(d["metrics"].get(m)))
            for m in self.metrics}

    def _variant_order(self):
        order = {}
        plan = self.run.get("plan")
        if isinstance(plan, dict):
            plan = list(plan.values())
        if isinstance(plan, list):
            for item in plan:
                if isinstance(item, dict) and item.get("variant") is not None:
                    order.setdefault(str(item["variant"]), len(order))
        return order

    def label(self, skey):
        return self.series_info[skey]["label"]

    def cell_docs(self, skey, xvalue):
        return self.cells.get((skey, json_key(xvalue)), [])

    def cell(self, skey, xvalue, metric):
        """Statistics of one table cell, or None when the cell has no point at all."""
        docs = self.cell_docs(skey, xvalue)
        if not docs:
            return None
        used = [d for d in docs if d["valid"] or self.include_invalid]
        values = [d["metrics"].get(metric) for d in used]
        values = [v for v in values if v is not None]
        result = {
            "docs": len(docs),
            "n_invalid": sum(1 for d in docs if not d["valid"]),
            "n_missing": len(used) - len(values),
            "values": values,
            "summary": stats.summary(values, confidence=CONFIDENCE) if values else None,
        }
        return result

    def unit(self, metric):
        return self.units.get(metric, "")
