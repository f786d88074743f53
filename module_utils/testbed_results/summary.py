# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run plan's printable summary (used by ``testbed_results.open_run``): sizes, progress, time left.

Pure functions, no file access.
"""

from ansible.module_utils.testbed_results.params import canonical_json


def format_duration(seconds):
    """Seconds as plans and progress lines print them: 45 s, 12 min, 2 h 05 min (the one formatter of the
    run plan's estimate, the sweep's progress line and experiments' own plan lines; pure, so modules
    can ship it)."""
    seconds = max(0, int(round(seconds)))
    if seconds < 90:
        return f"{seconds} s"
    minutes = int(round(seconds / 60.0))
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _plural(count, word, plural=None):
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def describe_plan(points, done_ids, estimate_s_per_point=None, done_durations=None, header=None):
    """A few printable lines: sizes, progress and estimated remaining time."""
    total = len(points)
    done = sum(1 for p in points if p["point_id"] in done_ids)
    pending = total - done
    variants = []
    for p in points:
        if p["variant"] not in variants:
            variants.append(p["variant"])
    param_sets = {canonical_json(p["parameters"]) for p in points}
    reps = {p["repetition"] for p in points}
    sizes = [_plural(len(variants), "variant"), _plural(len(param_sets), "parameter set"),
             _plural(len(reps), "repetition")]
    joiner = " × " if len(variants) * len(param_sets) * len(reps) == total else ", "
    if estimate_s_per_point is not None:
        estimate = f"estimated {format_duration(pending * float(estimate_s_per_point))}"
    elif done_durations:
        mean = sum(done_durations) / float(len(done_durations))
        estimate = f"estimated {format_duration(pending * mean)} (mean {mean:.1f} s per point so far)"
    elif pending:
        estimate = "no time estimate yet"
    else:
        estimate = "nothing left to run"
    lines = []
    if header:
        lines.append(header)
    lines.append(f"Plan: {_plural(total, 'point')} ({joiner.join(sizes)}), {done} done, {pending} to run, {estimate}")
    shown = ", ".join(variants[:12]) + (", ..." if len(variants) > 12 else "")
    lines.append(f"Variants: {shown}")
    return "\n".join(lines)
