# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Derived tables: relative to a baseline, the overall index, reference values beside the measured ones.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

from ansible.module_utils.testbed_reports.base import CLIP_NOTE, CONFIDENCE, SIGNIFICANT_MARK, ReportError
from ansible.module_utils.testbed_reports.format import fmt_mean_ci, fmt_num, fmt_p, is_clipped, welch
from ansible.module_utils.testbed_reports.load import matches
from ansible.module_utils.testbed_reports.model import is_finite_number, json_key, value_label
from ansible.module_utils.testbed_stats import core as stats


def variant_order(run, docs):
    order = []
    plan = run.get("plan")
    if isinstance(plan, dict):
        plan = list(plan.values())
    for item in plan if isinstance(plan, list) else []:
        if isinstance(item, dict) and item.get("variant") is not None and str(item["variant"]) not in order:
            order.append(str(item["variant"]))
    for doc in docs:
        if doc["variant"] not in order:
            order.append(doc["variant"])
    return order


def used_docs(docs, include_invalid):
    return [d for d in docs if d["verdict"] != "fault" and (d["valid"] or include_invalid)]


def finite_values(docs, metric):
    return [d["metrics"].get(metric) for d in docs if is_finite_number(d["metrics"].get(metric))]


def measured_with(docs, tool):
    """"<tool> <version> (<hosts>)" for the versions of ``tool`` the points recorded: a point's
    ``extra.tool`` ({name, version}) or its environment's ``hosts.<host>.tools`` (or ``*_tools``, e.g.
    the tools inside an image); "<tool> (version not recorded)" when none did."""
    found = {}
    for doc in docs:
        own = (doc.get("extra") or {}).get("tool")
        if isinstance(own, dict) and own.get("name") == tool and own.get("version"):
            found.setdefault(str(own["version"]), set())
        hosts = (doc.get("environment") or {}).get("hosts") or {}
        for host, facts in (hosts.items() if isinstance(hosts, dict) else ()):
            for key, tools in (facts.items() if isinstance(facts, dict) else ()):
                if (key == "tools" or key.endswith("_tools")) and isinstance(tools, dict) and tools.get(tool):
                    found.setdefault(str(tools[tool]), set()).add(host)
    if not found:
        return f"{tool} (version not recorded)"
    return ", ".join("{} {}{}".format(tool, version, f" ({', '.join(sorted(hosts))})" if hosts else "")
                     for version, hosts in sorted(found.items()))


def tool_sentence(docs, tools, metrics):
    """"Measured with ..." for the tools (``report.tools``: metric -> tool) of ``metrics``; "" if none."""
    names = []
    for metric in metrics:
        if tools.get(metric) and tools[metric] not in names:
            names.append(tools[metric])
    return "Measured with {}.".format("; ".join(measured_with(docs, n) for n in names)) if names else ""


def _params_label(params, names):
    return ", ".join(f"{n}={value_label(params.get(n))}" for n in names)


def relative_rows(run, docs, rel, include_invalid=False):
    """Rows of report.relative: per metric, variant and parameter set, the mean vs the baseline's.

    Returns ``{"parameters": [varying parameter names], "rows": [{metric, kind, variant, parameters,
    summary, baseline_summary, pct, p_value, significance, welch}]}``; ``pct`` is
    ``pct_drop`` (kind drop) or ``pct_change`` (rise, change) of the means, None for the baseline
    itself or when a side has no value.  Parameter sets where no variant has the metric are left out.
    """
    base = rel["baseline_variant"]
    used = [d for d in used_docs(docs, include_invalid) if matches(d, rel["where"])]
    groups, psets = {}, {}
    for doc in used:
        pkey = json_key(doc["parameters"])
        psets.setdefault(pkey, doc["parameters"])
        groups.setdefault((doc["variant"], pkey), []).append(doc)
    values_of = {}
    for doc in used:
        for name, value in doc["parameters"].items():
            values_of.setdefault(name, set()).add(json_key(value))
    varying = sorted(n for n in values_of if len(values_of[n]) > 1 or any(n not in d["parameters"] for d in used))
    order = variant_order(run, used)
    order = [base] + [v for v in order if v != base]
    rows = []
    for metric, kind in rel["metrics"].items():
        for pkey in sorted(psets, key=lambda k: _params_label(psets[k], varying)):
            if not any(finite_values(docs_here, metric) for (_v, k), docs_here in groups.items() if k == pkey):
                continue  # a parameter set (workload) without this metric
            base_values = finite_values(groups.get((base, pkey), []), metric)
            base_s = stats.summary(base_values, confidence=CONFIDENCE) if base_values else None
            for variant in order:
                here = groups.get((variant, pkey))
                if not here:
                    continue
                values = finite_values(here, metric)
                s = stats.summary(values, confidence=CONFIDENCE) if values else None
                row = {"metric": metric, "kind": kind, "variant": variant, "parameters": psets[pkey],
                       "summary": s, "values": values, "baseline_summary": base_s, "pct": None,
                       "p_value": None, "significance": "", "welch": None}
                if variant != base:
                    if s and base_s and base_s["mean"] != 0:
                        pct_of = stats.pct_drop if kind == "drop" else stats.pct_change
                        row["pct"] = pct_of(s["mean"], base_s["mean"])
                    row["p_value"], row["significance"], row["welch"] = welch(values, base_values)
                rows.append(row)
    return {"parameters": varying, "rows": rows}


def _fmt_pct(value, kind):
    """A drop as ``33.2 %``, a rise or change signed (``+98.8 %``); ``n/a`` without a value."""
    if value is None:
        return "n/a"
    return f"{value:.1f} %" if kind == "drop" else f"{value:+.1f} %"


def relative_blocks(run, docs, rel, reference, units, clip, include_invalid, tools=None):
    tools = tools or {}
    base = rel["baseline_variant"]
    data = relative_rows(run, docs, rel, include_invalid)
    variants = {r["variant"] for r in data["rows"]}
    if base not in variants:
        raise ReportError("report.relative.baseline_variant {!r} is not a variant of this run (variants: {})".format(
            base, ", ".join(variant_order(run, docs))))
    blocks = [("h", 2, rel.get("title") or f"Relative to `{base}`"),
              ("p", ("Mean \u00b1 half-width of the {:.0f} % CI (number of values) of each variant; drop = (baseline "
                     "\u2212 mean) / baseline \u00d7 100 (pct_drop), rise and change = (mean \u2212 baseline) / baseline "
                     "\u00d7 100 (pct_change), of the means at the same parameters; p = two-sided Welch t test "
                     "against the baseline; {} = significant at \u03b1 = 0.05.").format(CONFIDENCE * 100, SIGNIFICANT_MARK))]
    ref_values = (reference or {}).get("values") or {}
    # the study's own published drops and rises (as it printed them), beside ours
    ref_relative = (reference or {}).get("relative") or {}
    for metric, kind in rel["metrics"].items():
        rows = [r for r in data["rows"] if r["metric"] == metric]
        unit = units.get(metric, "")
        blocks.append(("h", 3, f"`{metric}` ({unit})" if unit else f"`{metric}`"))
        sentence = tool_sentence(docs, tools, [metric])
        if sentence:
            blocks.append(("p", sentence))
        with_ref = any(metric in (ref_values.get(r["variant"]) or {}) for r in rows)
        with_ref_pct = any(metric in (ref_relative.get(r["variant"]) or {}) for r in rows)
        extra = list(rel["columns"])
        header = ["variant"] + extra + data["parameters"] + ["mean"] + ([reference["label"]] if with_ref else [])
        header += [f"{kind} vs `{base}`"] + ([f"{kind}, {reference['label']}"] if with_ref_pct else []) + ["p", "significant"]
        table, clipped = [], False
        for r in rows:
            mean = fmt_mean_ci(r["summary"], clip(metric)) if r["summary"] else "no value"
            clipped = clipped or is_clipped(r["summary"], clip(metric))
            ref_pct = (ref_relative.get(r["variant"]) or {}).get(metric)
            if r["variant"] == base:
                pct, ref_pct, p, sig = "\u2014", "\u2014", "\u2014", "\u2014"
            else:
                pct, ref_pct = (_fmt_pct(value, kind) for value in (r["pct"], ref_pct))
                p = fmt_p(r["p_value"]) if r["p_value"] is not None else "n/a"
                sig = r["significance"]
            line = [r["variant"]] + [value_label(rel["columns"][c].get(r["variant"], "")) for c in extra]
            line += [value_label(r["parameters"].get(n)) for n in data["parameters"]] + [mean]
            if with_ref:
                ref = (ref_values.get(r["variant"]) or {}).get(metric)
                line.append("" if ref is None else fmt_num(ref, ref))
            table.append(line + [pct] + ([ref_pct] if with_ref_pct else []) + [p, sig])
        if table:
            blocks.append(("table", header, table))
            if clipped:
                blocks.append(("p", CLIP_NOTE))
        else:
            blocks.append(("p", "No point has this metric."))
    blocks.extend(("p", note) for note in rel["notes"])
    return blocks


def overall_rows(run, docs, overall, include_invalid=False):
    """The overall index: per variant the ratio of its mean to the baseline's per item, their sum and mean.

    Ratios are ``ratio_to(mean, baseline mean)``, inverted for lower-is-better
    metrics by ``overall_index`` (so every ratio reads "fraction of the baseline's
    performance").  Returns ``{"baseline_means": {label: mean}, "variants": {variant:
    {"ratios": {label: ratio or None}, "index": overall_index result or None, "missing": [labels]}}}``.
    """
    base = overall["baseline_variant"]
    used = [d for d in used_docs(docs, include_invalid) if matches(d, overall["where"])]
    present = {d["variant"] for d in used}
    # a variant the spec's where leaves out (e.g. an emulated one) gets no column
    order = [v for v in variant_order(run, used) if v != base and v in present]
    means = {}
    for item in overall["items"]:
        for variant in [base] + order:
            values = finite_values([d for d in used if d["variant"] == variant and matches(d, item["where"])], item["metric"])
            means[(variant, item["label"])] = stats.summary(values)["mean"] if values else None
    hib = {i["label"]: overall["higher_is_better"].get(i["metric"], True) for i in overall["items"]}
    labels = [i["label"] for i in overall["items"]]
    out = {"baseline_means": {label: means[(base, label)] for label in labels}, "variants": {}}
    for variant in order:
        raw, missing = {}, []
        for label in labels:
            value, reference = means[(variant, label)], means[(base, label)]
            if value is None or reference is None or reference == 0 or value <= 0:
                missing.append(label)
            else:
                raw[label] = stats.ratio_to(value, reference)
        index = None
        if not missing:
            index = stats.overall_index(raw, metrics=labels, higher_is_better=hib)
        ratios = {label: (index["ratios"][label] if index else
                          (raw[label] if hib[label] else 1.0 / raw[label]) if label in raw else None)
                  for label in labels}
        out["variants"][variant] = {"ratios": ratios, "index": index, "missing": missing}
    return out


def overall_blocks(run, docs, overall, include_invalid):
    base = overall["baseline_variant"]
    data = overall_rows(run, docs, overall, include_invalid)
    if all(m is None for m in data["baseline_means"].values()):
        raise ReportError("report.overall_index.baseline_variant {!r} has no value for any of its metrics".format(base))
    variants = list(data["variants"])
    ref = overall["reference"]
    ref_variants = [v for v in variants if v in ref]
    labels = [i["label"] for i in overall["items"]]
    header = ["metric"] + variants + [f"{v} (reference)" for v in ref_variants]
    rows = []
    for item in overall["items"]:
        label = item["label"]
        lower = overall["higher_is_better"].get(item["metric"]) is False
        name = label + (" (lower is better: baseline / variant)" if lower else "")
        row = [name] + ["n/a" if data["variants"][v]["ratios"][label] is None
                        else f"{data['variants'][v]['ratios'][label]:.2f}" for v in variants]
        row += ["" if label not in ref[v] else f"{ref[v][label]:.2f}" for v in ref_variants]
        rows.append(row)
    ref_index = {}
    for v in ref_variants:
        if all(label in ref[v] for label in labels):
            ref_index[v] = stats.overall_index({label: ref[v][label] for label in labels}, metrics=labels)
    sums = ["sum (of {})".format(len(labels))]
    idx = ["overall index"]
    for v in variants:
        index = data["variants"][v]["index"]
        sums.append("n/a" if index is None else f"{index['sum']:.2f}")
        idx.append("n/a (no value: {})".format(", ".join(data["variants"][v]["missing"])) if index is None
                   else f"{index['index_pct']:.1f} %")
    for v in ref_variants:
        sums.append(f"{ref_index[v]['sum']:.2f}" if v in ref_index else "")
        idx.append(f"{ref_index[v]['index_pct']:.1f} %" if v in ref_index else "")
    rows += [sums, idx]
    return [("h", 2, overall.get("title") or f"Overall index relative to `{base}`"),
            ("p", ("Per metric the ratio of each variant's mean to the mean of `{}` (ratio_to), inverted for "
                   "lower-is-better metrics, so 1 = the baseline's performance; the overall index is the mean of "
                   "the ratios in % (overall_index).").format(base)),
            ("table", header, rows)]


def reference_blocks(run, docs, reference, units, include_invalid, shown=()):
    """Measured means beside the reference values, for metrics the relative tables do not already show."""
    used = [d for d in used_docs(docs, include_invalid) if matches(d, reference["where"])]
    rows = []
    pooled = False
    for variant in [v for v in variant_order(run, used) if v in reference["values"]] + \
            [v for v in reference["values"] if v not in {d["variant"] for d in used}]:
        for metric, ref in reference["values"][variant].items():
            if metric in shown:
                continue
            here = [d for d in used if d["variant"] == variant and is_finite_number(d["metrics"].get(metric))]
            values = finite_values(here, metric)
            pooled = pooled or len({json_key(d["parameters"]) for d in here}) > 1
            s = stats.summary(values, confidence=CONFIDENCE) if values else None
            unit = units.get(metric, "")
            rows.append([variant, f"`{metric}`" + (f" ({unit})" if unit else ""),
                         fmt_mean_ci(s) if s else "not measured", fmt_num(ref, ref),
                         f"{stats.pct_change(s['mean'], ref):+.1f} %" if s and ref != 0 else "n/a"])
    if not rows:
        return []
    blocks = [("h", 2, "Measured means beside {}".format(reference["label"])),
              ("p", ("The reference column holds numbers given in the report spec ({}), not measured here; "
                     "difference = (measured \u2212 reference) / reference \u00d7 100.").format(reference["label"])),
              ("table", ["variant", "metric", "measured mean", reference["label"], "difference"], rows)]
    if pooled:
        blocks.append(("p", "Some measured means pool several parameter sets (give report.reference.where to pick one)."))
    return blocks
