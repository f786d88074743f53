# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result store: point ids, run open/resume, atomic point documents, index.

Layout of one run (``<results_root>/<experiment>/<run_id>/``)::

    run.json               experiment, run_id, created, plan, plan_hash, run_parameters,
                           report (free spec read by scripts/testbed_report.py), plan_history
    index.json             derived: point_id -> {status, valid, file}; rebuilt from point files
    <point_id>.json        one document per measured point (schemas/result-point.schema.json)
    raw/<point_id>.<name>  raw tool outputs kept beside it

The point files are the truth: a point is *done* when its document exists.  A
document is written only after its measurement finished (temp file + rename),
so an interrupted point is simply pending on the next run.

Files are written FILE_MODE (0600) and directories made DIR_MODE (0700): a run's
command line, facts and raw outputs are for its owner only.

Plain functions (no AnsibleModule; only the shared ``testbed_parse`` and
``testbed_provenance`` helpers):
``library/result_run.py`` and ``library/result_store.py`` are thin wrappers,
pytest imports this directly.  Refusals raise :class:`ResultError` (a
ValueError) whose message is one sentence naming the bad field.
"""

import datetime
import errno
import hashlib
import json
import math
import os
import re
import shutil

from ansible.module_utils.testbed_parse import TEMP_PREFIX
from ansible.module_utils.testbed_parse import write_json_atomic as parse_write_json_atomic
from ansible.module_utils.testbed_parse import write_text_atomic as parse_write_text_atomic
from ansible.module_utils.testbed_results.params import canonical_json, describe_changes, parameter_changes
from ansible.module_utils.testbed_results.provenance import redact_provenance
from ansible.module_utils.testbed_results.summary import describe_plan

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux
    fcntl = None

try:
    from ansible.module_utils.ansible_release import __version__ as ANSIBLE_CORE_VERSION
except ImportError:  # pragma: no cover - always there in ansible-core
    ANSIBLE_CORE_VERSION = None

SCHEMA_VERSION = 1
RUN_FILE = "run.json"
INDEX_FILE = "index.json"
RAW_DIR = "raw"
LOCK_FILE = ".lock"

# Longest point id kept readable; longer parameter parts are replaced by a hash.
MAX_POINT_ID = 120
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_.+-]+")


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

# datetime.timezone.utc, spelled so that it also works on Python 3.9 (no datetime.UTC).
_UTC = datetime.timezone(datetime.timedelta(0))


class ResultError(ValueError):
    """A refused result-store operation; the message is one sentence saying why."""


def _utcnow():
    return datetime.datetime.now(_UTC)


def format_timestamp(moment):
    """ISO 8601 in UTC with a ``Z`` (microseconds only when present)."""
    moment = moment.astimezone(_UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(value, field):
    """Accept an ISO 8601 string with a timezone, or seconds since the epoch.

    Returns an aware ``datetime`` in UTC.  Raises ValueError naming ``field``.
    """
    if isinstance(value, bool) or value is None:
        raise ResultError(f"{field} must be an ISO 8601 timestamp with a timezone or epoch seconds, got {value!r}")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            raise ResultError(f"{field} is {value!r}, not a time")
        return datetime.datetime.fromtimestamp(value, _UTC)
    if isinstance(value, datetime.datetime):
        moment = value
    else:
        text = str(value).strip()
        if re.match(r"^\d+(\.\d+)?$", text):
            return datetime.datetime.fromtimestamp(float(text), _UTC)
        iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
        # Python < 3.11 fromisoformat wants exactly 0, 3 or 6 fraction digits.
        match = re.match(r"^(.*T\d\d:\d\d:\d\d)\.(\d+)(.*)$", iso)
        if match:
            iso = "{}.{}{}".format(match.group(1), (match.group(2) + "000000")[:6], match.group(3))
        try:
            moment = datetime.datetime.fromisoformat(iso)
        except ValueError:
            raise ResultError(f"{field} is {text!r}, not an ISO 8601 timestamp (expected e.g. 2026-11-21T15:30:00Z)") from None
    if moment.tzinfo is None:
        raise ResultError(
            f"{field} is {value!r} without a timezone; give UTC with a Z, e.g. "
            "now(utc=true, fmt='%Y-%m-%dT%H:%M:%S.%fZ') or ansible_date_time.iso8601")
    return moment.astimezone(_UTC)


def _check_finite(value, where):
    """Raise ValueError if a JSON-like structure holds nan/inf or non-JSON types."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ResultError(f"{where} is {value!r}; nan/inf are not measurements (store null and explain in reasons)")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ResultError(f"{where} has a non-text key {key!r}")
            _check_finite(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for number, item in enumerate(value):
            _check_finite(item, f"{where}[{number}]")
    elif value is not None and not isinstance(value, (str, int, bool)):
        raise ResultError(f"{where} is a {type(value).__name__}, which JSON cannot hold")


def _is_finite_number(value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return False
    return minimum is None or value >= minimum


def _short_hash(value, length=10):
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:length]


def check_name(value, field):
    """A run id or experiment name: filesystem-safe, no path separators."""
    if not isinstance(value, str) or not _SAFE_NAME.match(value):
        raise ResultError(
            f"{field} {value!r} is not a safe name: use letters, digits, '_', '.', '+', '-' and start with a letter or digit")
    return value


# ---------------------------------------------------------------------------
# Points and plans
# ---------------------------------------------------------------------------

def _sanitize_piece(text):
    """Make one id piece filesystem-safe; '__' stays reserved as the separator."""
    cleaned = _UNSAFE_CHARS.sub("-", text)
    cleaned = re.sub(r"_{2,}", "_", cleaned).strip("-_.") or "x"
    if cleaned != text:
        # Lossy: keep ids of distinct inputs distinct.
        cleaned = f"{cleaned}-{_short_hash(text, 6)}"
    return cleaned


def _value_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float, str)):
        return str(value) if not isinstance(value, float) else repr(value)
    return canonical_json(value)


def normalize_point(point, where="point"):
    """Validate a plan point and return ``{variant, parameters, repetition}``."""
    if not isinstance(point, dict):
        raise ResultError(f"{where} must be a mapping with variant, parameters and repetition, got {point!r}")
    unknown = sorted(set(point) - {"variant", "parameters", "repetition", "point_id", "done", "valid"})
    if unknown:
        raise ResultError("{} has unknown key(s) {} (allowed: variant, parameters, repetition)".format(where, ", ".join(unknown)))
    variant = point.get("variant")
    if not isinstance(variant, str) or not variant.strip():
        raise ResultError(f"{where}.variant must be a non-empty string, got {variant!r}")
    parameters = point.get("parameters")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise ResultError(f"{where}.parameters must be a mapping, got {parameters!r}")
    _check_finite(parameters, f"{where}.parameters")
    repetition = point.get("repetition", 1)
    if isinstance(repetition, str) and re.match(r"^\d+$", repetition.strip()):
        repetition = int(repetition)
    if isinstance(repetition, bool) or not isinstance(repetition, int) or repetition < 0:
        raise ResultError(f"{where}.repetition must be a whole number >= 0, got {repetition!r}")
    return {"variant": variant, "parameters": dict(parameters), "repetition": repetition}


def point_id(variant, parameters=None, repetition=1):
    """Deterministic, filesystem-safe id: ``<variant>__<k1>-<v1>_<k2>-<v2>__rep<N>``.

    Parameters are sorted by key.  Characters outside ``[A-Za-z0-9_.+-]`` become
    ``-`` (with a short hash of the original appended so that ids stay
    distinct); an id longer than 120 characters gets its parameter part
    replaced by ``p-<hash>`` of the canonical JSON of the parameters.
    """
    point = normalize_point({"variant": variant, "parameters": parameters, "repetition": repetition})
    variant_part = _sanitize_piece(point["variant"])
    params = point["parameters"]
    pieces = [f"{_sanitize_piece(str(key))}-{_sanitize_piece(_value_text(params[key]))}"
              for key in sorted(params)]
    rep_part = f"rep{point['repetition']}"
    parts = [variant_part] + (["_".join(pieces)] if pieces else []) + [rep_part]
    ident = "__".join(parts)
    if len(ident) > MAX_POINT_ID:
        if len(variant_part) > 60:
            variant_part = "{}-{}".format(variant_part[:48], _short_hash(point["variant"]))
        parts = [variant_part] + ([f"p-{_short_hash(canonical_json(params), 16)}"] if pieces else []) + [rep_part]
        ident = "__".join(parts)
    return ident


def normalize_plan(plan):
    """Validate a plan (list of points); return a list of points with ``point_id``.

    Order is kept; duplicate points are refused.
    """
    if not isinstance(plan, (list, tuple)) or not plan:
        raise ResultError("plan must be a non-empty list of points ({variant, parameters, repetition})")
    points = []
    seen = {}
    for number, raw in enumerate(plan):
        point = normalize_point(raw, f"plan[{number}]")
        ident = point_id(**point)
        if ident in seen:
            raise ResultError(f"plan[{number}] repeats plan[{seen[ident]}] (point id {ident}); "
                              "give each repetition its own number")
        seen[ident] = number
        point["point_id"] = ident
        points.append(point)
    return points


def plan_hash(plan):
    """sha256 of the canonical plan (order-independent)."""
    points = normalize_plan(plan)
    canonical = sorted(
        canonical_json({"variant": p["variant"], "parameters": p["parameters"], "repetition": p["repetition"]})
        for p in points)
    return hashlib.sha256("\n".join(canonical).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

# A run holds what it saw - the command line, the hosts' facts, raw tool output - so no other local user
# reads it: every file the store and the report write is FILE_MODE, every directory they make DIR_MODE
# (whatever the umask; an existing directory keeps its mode).
FILE_MODE = 0o600
DIR_MODE = 0o700


def make_private_dirs(path):
    """Make the directory ``path`` and its missing parents, each DIR_MODE; nothing when it exists."""
    path = os.path.abspath(path)
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise


def private_opener(path, flags):
    """``open(..., opener=private_opener)``: the file is created FILE_MODE (an existing one is narrowed to it)."""
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    except OSError:
        pass  # someone else's file: the mode is theirs to keep
    return fd


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` atomically (temp file + rename), FILE_MODE, in private directories."""
    make_private_dirs(os.path.dirname(os.path.abspath(path)))
    parse_write_text_atomic(path, text, mode=FILE_MODE)


def write_json_atomic(path, document):
    """``document`` as JSON (testbed_parse.write_json_atomic) to ``path``, atomically, FILE_MODE, in private directories."""
    make_private_dirs(os.path.dirname(os.path.abspath(path)))
    parse_write_json_atomic(path, document, mode=FILE_MODE)


def read_json(path):
    with open(path, "r", encoding="utf-8") as handle:
        return json.load(handle)


class RunLock:
    """An exclusive flock on ``<run_dir>/.lock`` (several forks storing at once)."""

    def __init__(self, run_dir):
        self.path = os.path.join(run_dir, LOCK_FILE)
        self.handle = None

    def __enter__(self):
        if fcntl is not None:
            self.handle = open(self.path, "a", opener=private_opener)
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.handle is not None:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
            self.handle.close()
        return False


def leftover_temp_files(run_dir):
    """Temp files of an atomic write left in ``run_dir`` or its ``raw/`` (a write killed before its rename)."""
    found = []
    for directory in (run_dir, os.path.join(run_dir, RAW_DIR)):
        if os.path.isdir(directory):
            found += [os.path.join(directory, name) for name in os.listdir(directory) if name.startswith(TEMP_PREFIX)]
    return sorted(found)


class IndexWriteError(OSError):
    """The point document is stored, but ``index.json`` (derived) could not be refreshed."""

    def __init__(self, doc_path, cause):
        super().__init__(cause.errno, cause.strerror)
        self.doc_path = doc_path
        self.cause = cause


def is_no_space(exc):
    """True for an OSError that says the filesystem (or the quota) is full."""
    return getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT)


def write_error_message(exc, directory):
    """One sentence for an OSError met while writing under ``directory``.

    A full filesystem says so and what to do: every write is atomic, so nothing
    half-written is left, and the same command resumes the run.
    """
    if is_no_space(exc):
        return (f"no space left on the filesystem of {directory} ([Errno {exc.errno}] {exc.strerror}); "
                "nothing half-written was left. Free space there (or give another testbed_results_dir) and run "
                "the same command again: the points already stored are kept and only the missing ones are measured")
    return f"cannot write in {directory}: {exc}"


def schema_version_problem(document, what):
    """A sentence when ``document`` says it follows a schema version this store does not know, else None.

    Version 1 files from before the field existed have none and are read as version 1.
    """
    version = document.get("schema_version", SCHEMA_VERSION) if isinstance(document, dict) else SCHEMA_VERSION
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return f"its schema_version is {version!r}, not a version number"
    if version > SCHEMA_VERSION:
        return (f"it is a {what} of schema version {version}, newer than this testbed's {SCHEMA_VERSION}: it was "
                "written by a newer testbed; use that version to resume or render it")
    if version != SCHEMA_VERSION:
        return f"it is a {what} of schema version {version}, which this testbed ({SCHEMA_VERSION}) cannot read"
    return None


def _run_file_problem(run):
    """Why a parsed run.json cannot be used, or None (old files without newer keys are fine)."""
    if not isinstance(run, dict):
        return f"it holds a {type(run).__name__}, not a mapping"
    version = schema_version_problem(run, "run file")
    if version:
        return version
    plan = run.get("plan")
    if not isinstance(plan, list):
        return "it has no plan list"
    for number, point in enumerate(plan):
        if not isinstance(point, dict) or not isinstance(point.get("point_id"), str):
            return f"plan[{number}] has no point_id"
    if not isinstance(run.get("plan_hash"), str):
        return "it has no plan_hash"
    if not isinstance(run.get("run_parameters", {}), dict):
        return "its run_parameters is not a mapping"
    if not isinstance(run.get("plan_history", []), list):
        return "its plan_history is not a list"
    return None


def load_run_file(run_dir):
    path = os.path.join(run_dir, RUN_FILE)
    try:
        run = read_json(path)
    except OSError as exc:
        raise ResultError(f"{run_dir} is not a run directory: cannot read {RUN_FILE} ({exc.strerror or exc})") from exc
    except ValueError as exc:
        raise ResultError(f"{path} is not valid JSON: {exc}") from exc
    problem = _run_file_problem(run)
    if problem:
        raise ResultError(f"{path} is not a run file of this testbed: {problem}")
    return run


def point_docs(run_dir, run):
    """Map point_id -> (document or None, problem or None) for the plan's points."""
    found = {}
    for point in run["plan"]:
        ident = point["point_id"]
        path = os.path.join(run_dir, ident + ".json")
        if not os.path.exists(path):
            continue
        try:
            doc = read_json(path)
        except (OSError, ValueError) as exc:
            found[ident] = (None, f"unreadable point file: {exc}")
            continue
        if not isinstance(doc, dict) or doc.get("point_id") != ident:
            found[ident] = (None, f"point file does not hold point {ident}")
            continue
        version = schema_version_problem(doc, "point document")
        if version:
            raise ResultError(f"{path}: {version}")
        found[ident] = (doc, None)
    return found


def build_index(run_dir, run=None, now=None):
    """Rebuild the index from the point files (the point files are the truth)."""
    run = run if run is not None else load_run_file(run_dir)
    docs = point_docs(run_dir, run)
    points = {}
    counts = {"done": 0, "valid": 0, "invalid": 0, "pending": 0, "corrupt": 0}
    for point in run["plan"]:
        ident = point["point_id"]
        doc, problem = docs.get(ident, (None, None))
        if doc is not None:
            valid = doc.get("valid") is True
            points[ident] = {"status": "done", "valid": valid, "file": ident + ".json",
                             "duration_s": doc.get("duration_s")}
            counts["done"] += 1
            counts["valid" if valid else "invalid"] += 1
        elif problem is not None:
            points[ident] = {"status": "corrupt", "valid": None, "file": ident + ".json", "problem": problem}
            counts["corrupt"] += 1
            counts["pending"] += 1
        else:
            points[ident] = {"status": "pending", "valid": None, "file": None}
            counts["pending"] += 1
    planned = set(points)
    unplanned = sorted(
        name[:-5] for name in os.listdir(run_dir)
        if name.endswith(".json") and "__rep" in name and name[:-5] not in planned)
    index = {
        "schema_version": SCHEMA_VERSION,
        "experiment": run.get("experiment"),
        "run_id": run.get("run_id"),
        "updated": format_timestamp(now or _utcnow()),
        "total": len(run["plan"]),
        "points": points,
        "unplanned": unplanned,
    }
    index.update(counts)
    return index


def refresh_index(run_dir, run=None, now=None):
    index = build_index(run_dir, run=run, now=now)
    write_json_atomic(os.path.join(run_dir, INDEX_FILE), index)
    return index


def read_run_dir(run_dir):
    """Read every JSON file of a run directory without judging it (for readers such as the report).

    Returns ``{"run": run.json's content or None when it is absent, "run_error": why run.json
    could not be read or None, "files": [{"name", "doc", "error"}, ...]}`` with one entry per
    ``<name>.json`` other than run.json and index.json (planned or not, hidden temp files
    skipped), sorted by name; ``doc`` is None and ``error`` says why when the file is not JSON.
    """
    run, run_error = None, None
    path = os.path.join(run_dir, RUN_FILE)
    if os.path.exists(path):
        try:
            run = read_json(path)
        except (OSError, ValueError) as exc:
            run_error = f"{path} is not readable JSON: {exc}"
    files = []
    for name in sorted(os.listdir(run_dir)):
        if not name.endswith(".json") or name.startswith(".") or name in (RUN_FILE, INDEX_FILE):
            continue
        if not os.path.isfile(os.path.join(run_dir, name)):
            continue
        try:
            files.append({"name": name, "doc": read_json(os.path.join(run_dir, name)), "error": None})
        except (OSError, ValueError) as exc:
            files.append({"name": name, "doc": None, "error": str(exc)})
    return {"run": run, "run_error": run_error, "files": files}


def load_run(run_dir):
    """Return ``{"run": run.json, "docs": [point documents in plan order], "index": rebuilt index}``."""
    run = load_run_file(run_dir)
    found = point_docs(run_dir, run)
    docs = [found[p["point_id"]][0] for p in run["plan"]
            if p["point_id"] in found and found[p["point_id"]][0] is not None]
    return {"run": run, "docs": docs, "index": build_index(run_dir, run=run), "run_dir": run_dir}


# ---------------------------------------------------------------------------
# Opening a run
# ---------------------------------------------------------------------------

def _new_run_id(experiment_dir, now):
    base = now.astimezone(_UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = base
    number = 1
    while os.path.exists(os.path.join(experiment_dir, candidate)):
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def _done_ids(run_dir, run):
    found = point_docs(run_dir, run) if os.path.isdir(run_dir) else {}
    return {ident: doc for ident, (doc, problem) in found.items() if doc is not None}


def _existing_runs(experiment_dir):
    """(created, run_id, run) for every run directory of the experiment, newest first.

    A directory without ``run.json`` is not a run and is skipped; a ``run.json``
    that cannot be read or is not a run file is an error naming it (``auto``
    must not silently start over beside a run it cannot read).
    """
    runs = []
    if not os.path.isdir(experiment_dir):
        return runs
    for name in os.listdir(experiment_dir):
        run_dir = os.path.join(experiment_dir, name)
        if not os.path.isfile(os.path.join(run_dir, RUN_FILE)):
            continue
        try:
            run = load_run_file(run_dir)
        except ResultError as exc:
            raise ResultError(
                f"run_id auto cannot choose a run: {exc}. Repair or move away {run_dir}, "
                "or start a fresh run with run_id new (-e testbed_run_id=new)") from None
        runs.append((str(run.get("created", "")), name, run))
    runs.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return runs


def _force_hint(run_id):
    return f"-e testbed_run_id={run_id} -e testbed_run_force=true (result_run force: true)"


def open_run(results_root, experiment, plan, run_id="auto", run_parameters=None, report=None,
             estimate_s_per_point=None, now=None, write=True, force=False, remeasure_invalid=False, provenance=None):
    """Create or resume a run directory; return the plan with done flags.

    ``run_id="auto"`` resumes the newest run of ``experiment`` whose plan hash
    matches and whose ``run_parameters`` are the same (compared as
    :func:`comparable_parameters`), finished or not, so running the same sweep
    again measures only what is missing (nothing when it is complete).  When
    there is none a new UTC timestamp id is made; if a run with the same plan
    exists but was measured with other parameters, ``resume_note`` says which
    keys differ (old -> new) and why a new run was started.  ``run_id="new"``
    always starts a new run.

    An explicit ``run_id`` is created, or resumed; a changed plan is merged into
    it (new points added, points already there kept, ``plan_history`` records the
    change).  Different ``run_parameters`` are refused (the run would mix two
    setups) unless ``force`` is true; then they replace the stored ones and
    ``plan_history`` keeps the previous parameters and plan hash.
    ``run_parameters=None`` compares nothing (the stored ones are kept).  A
    ``run.json`` that cannot be read is an error naming the file.  With
    ``write=False`` (check mode) nothing is written.  ``remeasure_invalid``
    lists the points stored as invalid measurements as pending again.
    ``provenance`` (module_utils/testbed_provenance: the testbed's commit, the
    command, the controller's software) is appended to ``invocations`` in
    ``run.json`` when it differs from the last one; the store copies the last
    one into every point it writes.

    The steps: check the arguments, choose the run, create or update its
    ``run.json``, write it, list the plan's points.
    """
    run_id = _check_open_arguments(experiment, run_id, force, run_parameters, report, estimate_s_per_point)
    if provenance is not None and not isinstance(provenance, dict):
        raise ResultError(f"provenance must be a mapping, got {provenance!r}")
    # no secret is stored, whoever made the provenance (the lookup redacts already: this changes nothing then)
    provenance = redact_provenance(provenance)
    points = normalize_plan(plan)
    now = now or _utcnow()
    request = {"experiment": experiment, "experiment_dir": os.path.join(results_root, experiment),
               "run_id": run_id, "points": points, "plan_hash": plan_hash(points), "run_parameters": run_parameters,
               "report": report, "force": force, "now": now, "stamp": format_timestamp(now), "provenance": provenance}
    chosen = _choose_run(request)
    run_dir = os.path.join(request["experiment_dir"], chosen["run_id"])
    if chosen["run"] is None:
        run, changed, action = _new_run_file(request, chosen["run_id"]), True, "created"
    else:
        run, changed, action = _update_run_file(request, chosen)
    last = (run.get("invocations") or [{}])[-1]
    if provenance is not None and {k: v for k, v in last.items() if k != "at"} != provenance:
        run["invocations"] = list(run.get("invocations") or []) + [dict(provenance, at=request["stamp"])]
        changed = True
    if changed and write:
        _write_run_file(run_dir, run, now)
    listing = _list_points(run_dir, run, points, remeasure_invalid)
    header = "Run {}/{} ({}{})".format(experiment, chosen["run_id"], action,
                                       "" if write else ", planned: nothing written yet")
    text = describe_plan(points, listing["counted"], estimate_s_per_point, listing["durations"], header=header)
    if chosen["resume_note"]:
        text += "\nNote: " + chosen["resume_note"]
    return {
        "run_id": chosen["run_id"],
        "run_dir": run_dir,
        "experiment": experiment,
        "action": action,
        "changed": changed,
        "plan_hash": run["plan_hash"],
        "points": listing["points"],
        "pending": listing["pending"],
        "done_count": len(listing["points"]) - len(listing["pending"]),
        "total": len(listing["points"]),
        "run_total": len(run["plan"]),
        "plan_text": text,
        "resume_note": chosen["resume_note"],
    }


def _check_open_arguments(experiment, run_id, force, run_parameters, report, estimate_s_per_point):
    """Refuse what open_run cannot use (one sentence each); return the run id (None is auto)."""
    check_name(experiment, "experiment")
    if run_id is None:
        run_id = "auto"
    if run_id not in ("auto", "new"):
        check_name(run_id, "run_id")
    if not isinstance(force, bool):
        raise ResultError(f"force must be true or false, got {force!r}")
    if force and run_id in ("auto", "new"):
        raise ResultError(f"force applies to an explicit run_id (continue that run with other run_parameters), "
                          f"not to run_id {run_id}; give -e testbed_run_id=<id> with -e testbed_run_force=true")
    if run_parameters is not None and not isinstance(run_parameters, dict):
        raise ResultError(f"run_parameters must be a mapping, got {run_parameters!r}")
    if report is not None and not isinstance(report, dict):
        raise ResultError(f"report must be a mapping, got {report!r}")
    _check_finite(run_parameters or {}, "run_parameters")
    _check_finite(report or {}, "report")
    if estimate_s_per_point is not None and not _is_finite_number(estimate_s_per_point, minimum=0):
        raise ResultError(f"estimate_s_per_point must be a finite number of seconds >= 0, got {estimate_s_per_point!r}")
    return run_id


def _choose_run(request):
    """Which run to open: ``{run_id, run (None: a new one), resume_note, forced_changes}``."""
    experiment_dir, run_id = request["experiment_dir"], request["run_id"]
    run_parameters = request["run_parameters"]
    chosen = {"run_id": run_id, "run": None, "resume_note": None, "forced_changes": []}
    if run_id == "auto":
        same_plan = [(name, candidate) for _created, name, candidate in _existing_runs(experiment_dir)
                     if candidate.get("plan_hash") == request["plan_hash"]]
        for name, candidate in same_plan:
            if run_parameters is None or not parameter_changes(candidate.get("run_parameters"), run_parameters):
                chosen.update(run_id=name, run=candidate)
                break
        if same_plan and (chosen["run"] is None or chosen["run_id"] != same_plan[0][0]):
            newest = same_plan[0][0]
            changes = describe_changes(parameter_changes(same_plan[0][1].get("run_parameters"), run_parameters))
            if chosen["run"] is None:
                chosen["resume_note"] = (
                    f"not resuming run {newest} (same plan): its run_parameters differ ({changes}); starting a new "
                    f"run. To continue {newest} with the new parameters anyway: {_force_hint(newest)}")
            else:
                chosen["resume_note"] = (
                    f"resuming run {chosen['run_id']}, the newest with this plan and these run_parameters; "
                    f"the newer run {newest} has other run_parameters ({changes})")
        if chosen["run"] is None:
            chosen["run_id"] = _new_run_id(experiment_dir, request["now"])
    elif run_id == "new":
        chosen["run_id"] = _new_run_id(experiment_dir, request["now"])
    elif os.path.isfile(os.path.join(experiment_dir, run_id, RUN_FILE)):
        run = load_run_file(os.path.join(experiment_dir, run_id))
        chosen["run"] = run
        if run.get("experiment") != request["experiment"]:
            raise ResultError("run {} belongs to experiment {!r}, not {!r}".format(
                run_id, run.get("experiment"), request["experiment"]))
        if run_parameters is not None:
            chosen["forced_changes"] = parameter_changes(run.get("run_parameters"), run_parameters)
            if chosen["forced_changes"] and not request["force"]:
                raise ResultError(
                    f"run {run_id} was measured with other run_parameters "
                    f"({describe_changes(chosen['forced_changes'])}); resuming it would mix two setups in one run. "
                    "Start a new run (-e testbed_run_id=new, or auto), "
                    f"or continue this one anyway with {_force_hint(run_id)}: run.json then keeps the old "
                    "parameters and plan hash in plan_history")
    elif os.path.exists(os.path.join(experiment_dir, run_id)) and os.listdir(os.path.join(experiment_dir, run_id)):
        raise ResultError(f"{os.path.join(experiment_dir, run_id)} exists but has no {RUN_FILE}; "
                          "refusing to turn it into a run")
    return chosen


def _new_run_file(request, run_id):
    """The ``run.json`` of a new run."""
    points, stamp = request["points"], request["stamp"]
    return {
        "schema_version": SCHEMA_VERSION,
        "experiment": request["experiment"],
        "run_id": run_id,
        "created": stamp,
        "plan": points,
        "plan_hash": request["plan_hash"],
        "run_parameters": dict(request["run_parameters"] or {}),
        "report": dict(request["report"] or {}),
        "plan_history": [{"at": stamp, "event": "created", "plan_hash": request["plan_hash"],
                          "points": len(points), "added": [p["point_id"] for p in points]}],
    }


def _update_run_file(request, chosen):
    """An existing run's ``run.json`` with the requested plan merged in: ``(run, changed, action)``."""
    run, stamp = chosen["run"], request["stamp"]
    previous_hash = run["plan_hash"]
    run.setdefault("plan_history", [])
    run.setdefault("run_parameters", {})
    run.setdefault("report", {})
    changed = False
    known = {p["point_id"] for p in run["plan"]}
    added = [p for p in request["points"] if p["point_id"] not in known]
    if added:
        run["plan"] = list(run["plan"]) + added
        run["plan_hash"] = plan_hash(run["plan"])
        run["plan_history"].append({"at": stamp, "event": "extended", "plan_hash": run["plan_hash"],
                                    "requested_plan_hash": request["plan_hash"], "points": len(run["plan"]),
                                    "added": [p["point_id"] for p in added]})
        changed = True
    if chosen["forced_changes"]:
        run["plan_history"].append({
            "at": stamp, "event": "forced", "plan_hash": run["plan_hash"], "points": len(run["plan"]),
            "added": [], "updated": ["run_parameters"],
            "changed_keys": [key for key, _old, _new in chosen["forced_changes"]],
            "previous_run_parameters": run.get("run_parameters", {}),
            "previous_plan_hash": previous_hash})
        run["run_parameters"] = dict(request["run_parameters"])
        changed = True
    report = request["report"]
    if report is not None and run.get("report") != report:
        run["report"] = dict(report)
        run["plan_history"].append({"at": stamp, "event": "updated", "plan_hash": run["plan_hash"],
                                    "points": len(run["plan"]), "added": [], "updated": ["report"]})
        changed = True
    return run, changed, "extended" if added else "resumed"


def _write_run_file(run_dir, run, now):
    """Write ``run.json`` and the index; a run directory made just now is removed again when that fails."""
    made = not os.path.isdir(run_dir)
    if made:
        make_private_dirs(run_dir)
    try:
        with RunLock(run_dir):
            write_json_atomic(os.path.join(run_dir, RUN_FILE), run)
            refresh_index(run_dir, run=run, now=now)
    except BaseException:
        # A run directory made just now holds no point: leave no empty run behind
        # (e.g. on a full filesystem); an existing run keeps its old run.json.
        if made:
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def _list_points(run_dir, run, points, remeasure_invalid):
    """The requested points with done/valid (and an invalid one's reasons), the pending ones, the durations."""
    done = _done_ids(run_dir, run)
    listed = []
    for p in points:
        doc = done.get(p["point_id"])
        entry = {"point_id": p["point_id"], "variant": p["variant"], "parameters": p["parameters"],
                 "repetition": p["repetition"], "done": doc is not None,
                 "valid": (doc.get("valid") is True) if doc is not None else None}
        if doc is not None and doc.get("valid") is not True:
            entry["reasons"] = [str(reason) for reason in doc.get("reasons") or []]
            # remeasure_invalid: a stored invalid measurement is pending again (fault documents never count)
            if remeasure_invalid:
                entry.update(done=False, remeasure=True)
        listed.append(entry)
    pending = [dict(p) for p in listed if not p["done"]]
    durations = [d.get("duration_s") for d in done.values()
                 if isinstance(d.get("duration_s"), (int, float)) and not isinstance(d.get("duration_s"), bool)]
    return {"points": listed, "pending": pending, "durations": durations,
            "counted": set(done) - {p["point_id"] for p in pending}}
