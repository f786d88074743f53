# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result store's writing side: one point document, validated and written atomically.

``store_point`` checks what a caller hands over (one sentence naming the bad
field), builds the document, validates it against the schema the module
carries (``testbed_results.schemas``), writes its raw outputs and then the document
(temp file + rename), and refreshes the run's index. Fault documents (a point
measured across a broken lab component) and superseded invalid measurements
are named here: no caller needs to know the file names. The run's reading
side (ids, plans, open/resume, index) is ``testbed_results``.
"""

import errno
import json
import os
import platform
import re
import socket

from ansible.module_utils.testbed_host_state import identity_difference
from ansible.module_utils.testbed_parse import fsync_dir, unit_of
from ansible.module_utils.testbed_results import (
    INDEX_FILE,
    RAW_DIR,
    RUN_FILE,
    SCHEMA_VERSION,
    IndexWriteError,
    ResultError,
    RunLock,
    format_timestamp,
    load_run_file,
    make_private_dirs,
    normalize_point,
    parse_timestamp,
    point_docs,
    point_id,
    read_json,
    refresh_index,
    write_json_atomic,
    write_text_atomic,
)
from ansible.module_utils.testbed_results.schemas import SCHEMA_TEXT

try:
    from ansible.module_utils.ansible_release import __version__ as ANSIBLE_CORE_VERSION
except ImportError:  # pragma: no cover - always there in ansible-core
    ANSIBLE_CORE_VERSION = None


# ---------------------------------------------------------------------------
# Storing a point
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Schema validation (schemas/*.schema.json are the contract; testbed_results.schemas carries the same text)
# ---------------------------------------------------------------------------

POINT_SCHEMA = "result-point.schema.json"
SCHEMA_DIR_ENV = "TESTBED_SCHEMA_DIR"
_VALIDATORS = {}
# A raw output's name (raw/<point_id>.<name>)
_RAW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

# How the schema's named definitions read in a message.
_DEFINITION_WORDS = {
    "finiteNumber": "a finite number", "finiteJson": "JSON without NaN/Infinity",
    "safeName": "a safe name", "utcTimestamp": "a UTC timestamp with Z", "hostEnvironment": "a host environment",
}

# Messages that say how to fix the most common mistakes: (field, schema keyword) -> sentence.
_SCHEMA_HINTS = {
    ("reasons", "minItems"): "valid is false but reasons is empty; say why the measurement cannot be trusted",
    ("environment", "required"): ("environment needs a 'hosts' mapping "
                                  "(inventory name -> testbed_environment from tool_versions)"),
    ("environment.hosts", "minProperties"): "environment.hosts must be a non-empty mapping of host name -> facts",
}


def schema_source(name=POINT_SCHEMA):
    """Where the schema ``name`` comes from: ``(label, text)``.

    ``$TESTBED_SCHEMA_DIR/<name>`` when that variable is set (to try a changed
    schema without regenerating anything); otherwise the copy carried in
    ``testbed_results.schemas`` (made from ``schemas/`` by scripts/sync-schemas.py),
    which travels inside every module payload: no working directory, no
    ``ANSIBLE_CONFIG`` and no repository checkout is needed.
    """
    directory = os.environ.get(SCHEMA_DIR_ENV)
    if directory:
        path = os.path.join(directory, name)
        try:
            with open(path, "r", encoding="utf-8") as handle:
                return path, handle.read()
        except OSError as exc:
            raise ResultError(f"cannot read the schema {path} ({SCHEMA_DIR_ENV} is set to {directory}): "
                              f"{exc.strerror}; unset {SCHEMA_DIR_ENV} to use the schema carried with the module") from None
    if name not in SCHEMA_TEXT:
        raise ResultError(f"no schema named {name} is carried with the module (known: "
                          f"{', '.join(sorted(SCHEMA_TEXT))})")
    return f"schemas/{name}", SCHEMA_TEXT[name]


def schema_validator(name=POINT_SCHEMA):
    """A Draft 2020-12 validator of ``schemas/<name>`` (cached)."""
    if name in _VALIDATORS:
        return _VALIDATORS[name]
    try:
        import jsonschema
    except ImportError:
        raise ResultError(
            "the Python package jsonschema is missing on the controller, and the result store validates every "
            "document with schemas/" + name + "; install requirements.txt (./scripts/setup.sh makes .venv) and run "
            "result_store with that Python (localhost's ansible_python_interpreter: {{ ansible_playbook_python }})"
        ) from None
    label, text = schema_source(name)
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise ResultError(f"cannot read the schema {label}: {exc}") from exc
    validator = jsonschema.Draft202012Validator(schema)
    _VALIDATORS[name] = validator
    return validator


def _field_name(path):
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text


def _expected(schema):
    if not isinstance(schema, dict):
        return "?"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _DEFINITION_WORDS.get(name, name)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        return "/".join(types)
    if "const" in schema:
        return repr(schema["const"])
    return "a value the schema allows"


def _shown(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _schema_message(error):
    field = _field_name(error.absolute_path)
    hint = _SCHEMA_HINTS.get((field, error.validator))
    if hint:
        return hint
    where = field or "the document"
    if "propertyNames" in error.schema_path:
        if error.validator == "pattern":
            return f"{where} has the key {_shown(error.instance)}, which does not match {error.validator_value!r}"
        return f"{where} has the key {_shown(error.instance)}: {error.message}"
    if error.validator in ("anyOf", "oneOf"):
        return f"{where} is {_shown(error.instance)}; expected one of: " + ", ".join(
            _expected(choice) for choice in error.validator_value)
    if error.validator == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return f"{where} is {_shown(error.instance)}; expected " + " or ".join(types)
    return f"{where}: {error.message}"


def validate_document(document, name=POINT_SCHEMA, what="point document"):
    """Raise ResultError naming every bad field (at most 4) unless ``document`` follows ``schemas/<name>``."""
    validator = schema_validator(name)
    try:
        # JSON's own view of the document: tuples are arrays; a non-JSON value is refused here.
        plain = json.loads(json.dumps(document))
    except (TypeError, ValueError) as exc:
        raise ResultError(f"{what} holds a value JSON cannot hold: {exc}") from None
    errors = sorted(validator.iter_errors(plain), key=lambda e: ([str(p) for p in e.absolute_path], e.validator))
    if errors:
        messages = []
        for error in errors:
            message = _schema_message(error)
            if message not in messages:
                messages.append(message)
        shown = "; ".join(messages[:4]) + (f"; and {len(messages) - 4} more" if len(messages) > 4 else "")
        raise ResultError(f"{shown} ({what} checked against schemas/{name})")
    return document


# ---------------------------------------------------------------------------
# Building a point document
# ---------------------------------------------------------------------------

def units_for(metrics):
    """Unit of every metric: from its name (``unit_of``) for numbers and nulls;
    null for strings and booleans, which have no unit."""
    units = {}
    for name, value in metrics.items():
        if isinstance(value, (str, bool)):
            units[name] = None
        else:
            units[name] = unit_of(name)
    return units


def _string_list(value, field):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ResultError(f"{field} must be a list of sentences, got {value!r}")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ResultError(f"{field} must hold non-empty strings, got {item!r}")
    return list(value)


def normalize_environment(environment):
    """``{"hosts": {name: facts}, "controller": {...}}``; a single host's
    ``testbed_environment`` (it has ``hostname``) is wrapped under its name.
    The types of the keys are checked by the point schema (hostEnvironment)."""
    if not isinstance(environment, dict) or not environment:
        raise ResultError("environment must be a non-empty mapping (hosts: {name: testbed_environment}, controller: {...})")
    if "hosts" not in environment and isinstance(environment.get("hostname"), str):
        return {"hosts": {environment["hostname"]: dict(environment)}, "controller": {}}
    result = dict(environment)
    controller = result.get("controller")
    result["controller"] = dict(controller) if isinstance(controller, dict) else ({} if controller is None else controller)
    return result


def _find_planned(run, point):
    if isinstance(point, str):
        ident = point
    elif isinstance(point, dict) and point.get("point_id") and "variant" not in point:
        ident = point["point_id"]
    elif isinstance(point, dict):
        ident = point_id(**normalize_point(
            {k: v for k, v in point.items() if k in ("variant", "parameters", "repetition")}, "point"))
        if point.get("point_id") and point["point_id"] != ident:
            raise ResultError("point.point_id {!r} does not match its variant/parameters/repetition ({})".format(point["point_id"], ident))
    else:
        raise ResultError(f"point must be a mapping (variant, parameters, repetition) or a point_id, got {point!r}")
    for planned in run["plan"]:
        if planned["point_id"] == ident:
            return planned
    raise ResultError("point {} is not in the plan of run {}; open the run with a plan that includes it".format(ident, run.get("run_id")))


def merge_source_verdicts(valid, reasons, warnings, sources):
    """Fold the parser results' verdicts into the point's.

    ``valid=None`` means "valid when every source is valid" (needs sources).
    Reasons and warnings of the sources are appended as ``"<source>: <text>"``.
    """
    sources = sources or {}
    if not isinstance(sources, dict):
        raise ResultError(f"sources must be a mapping of name -> parser result, got {sources!r}")
    reasons = list(_string_list(reasons, "reasons"))
    warnings = list(_string_list(warnings, "warnings"))
    for name in sorted(sources):
        result = sources[name]
        if not isinstance(result, dict):
            raise ResultError(f"sources.{name} must be a parser result mapping, got {result!r}")
        if result.get("valid") is False:
            for reason in _string_list(result.get("reasons"), f"sources.{name}.reasons") or ["invalid measurement"]:
                text = f"{name}: {reason}"
                # the point's own reasons may already carry it (e.g. filter workload_result copies the parser's)
                if text not in reasons and reason not in reasons:
                    reasons.append(text)
        for warning in _string_list(result.get("warnings"), f"sources.{name}.warnings"):
            text = f"{name}: {warning}"
            if text not in warnings and warning not in warnings:
                warnings.append(text)
    if valid is None:
        if not sources:
            raise ResultError("valid is not given and there are no sources to derive it from")
        valid = all(result.get("valid") is True for result in sources.values())
    elif valid and any(result.get("valid") is False for result in sources.values()):
        bad = ", ".join(sorted(n for n, r in sources.items() if r.get("valid") is False))
        warnings.append(f"stored as valid although source(s) {bad} reported an invalid measurement")
    return valid, reasons, warnings


def fault_reason(evidence):
    """The primary reason of a fault document: which lab component failed, and how."""
    if isinstance(evidence, list) and evidence and all(isinstance(e, dict) for e in evidence):
        text = "; ".join("{}: {}".format(e.get("component", "?"), e.get("evidence", e.get("problem", "failed")))
                         for e in evidence)
    elif evidence in (None, "", [], {}):
        text = "a health check failed after this point"
    else:
        text = str(evidence)
    return "lab fault, not a result (measured again after recovery): " + text


def fault_documents(run_dir, point_id):
    """The fault documents stored for the planned point ``point_id`` (file names, sorted by attempt)."""
    cut = point_id.rindex("__rep")
    pattern = re.compile(re.escape(point_id[:cut]) + r"__fault(\d+)" + re.escape(point_id[cut:]) + r"\.json$")
    found = []
    for name in os.listdir(run_dir) if os.path.isdir(run_dir) else []:
        match = pattern.match(name)
        if match:
            found.append((int(match.group(1)), name))
    return [name for _number, name in sorted(found)]


def iter_run_documents(run_dir):
    """Every document of a run - its points' results and its fault documents - in file-name order,
    read one at a time (a caller that stops early reads no more)."""
    for name in sorted(os.listdir(run_dir)):
        if name.endswith(".json") and not name.startswith(".") and name not in (RUN_FILE, INDEX_FILE):
            try:
                document = read_json(os.path.join(run_dir, name))
            except (OSError, ValueError):
                continue
            if isinstance(document, dict) and "point_id" in document:
                yield document


def run_documents(run_dir):
    """Every document of a run - its points' results and its fault documents - in file-name order."""
    return list(iter_run_documents(run_dir))


def named_documents(run_dir):
    """{name: document} of every point and fault document of a run, the name being the stored file's
    without .json (a fault document's names its attempt: ``<point>__faultN__repM``). Unlike
    run_documents, a file that does not parse is an error (ValueError naming it): nothing the store
    writes is ever half-written."""
    documents = {}
    for name in sorted(os.listdir(run_dir)):
        if name.endswith(".json") and not name.startswith(".") and name not in (RUN_FILE, INDEX_FILE):
            try:
                document = read_json(os.path.join(run_dir, name))
            except ValueError as exc:
                raise ValueError(f"{os.path.join(run_dir, name)} is not a whole JSON document: {exc}") from exc
            if isinstance(document, dict) and "point_id" in document:
                documents[name[:-len(".json")]] = document
    return documents


def other_machines(run_dir, environment):
    """Sentences naming each host of ``environment`` that is another machine than the one the run's
    stored documents (points and faults) recorded under the same inventory name (its identity:
    machine-id, DMI product UUID, NIC MACs; module_utils/testbed_host_state.py)."""
    current = {name: facts["identity"] for name, facts in (environment.get("hosts") or {}).items()
               if isinstance(facts, dict) and isinstance(facts.get("identity"), dict)}
    stored = {}
    # stops at the first documents that name every host: usually one file read per store
    for document in iter_run_documents(run_dir) if current and os.path.isdir(run_dir) else ():
        for name, facts in ((document.get("environment") or {}).get("hosts") or {}).items():
            if name in current and name not in stored and isinstance(facts, dict) \
                    and isinstance(facts.get("identity"), dict):
                stored[name] = facts["identity"]
        if len(stored) == len(current):
            break
    found = (identity_difference(name, stored[name], current[name]) for name in sorted(stored))
    return [sentence for sentence in found if sentence]


def store_point(run_dir, point, metrics, valid, reasons, warnings, environment, started_at, finished_at,
                raw=None, sources=None, extra=None, overwrite=False, write=True, fault=None, replace_invalid=False):
    """Write one point document atomically, its raw files beside it, then refresh the index.

    Returns the document.  Raises ResultError (a ValueError, one sentence) for
    a point not in the plan, bad metrics (not flat, nan/inf), bad timestamps,
    or a point already stored (unless ``overwrite``, or ``replace_invalid`` and
    the stored document is an invalid measurement: that one is kept under
    ``superseded/<point_id>.<n>/`` with its raw outputs, see :func:`supersede`).
    ``write=False`` (check mode) does every check and returns the document
    without writing.

    ``fault={"evidence": ...}`` writes a fault document instead: the point was
    measured across a broken lab component, so it is not a result. It goes to
    ``<variant>__<parameters>__fault<N>__rep<R>.json`` (``verdict: fault``),
    N the next attempt of that point (the store counts them; ``attempt`` in
    ``fault`` sets it),
    which never makes the planned point done: the point stays pending and is
    measured again.
    """
    run = load_run_file(run_dir)
    planned = _find_planned(run, point)
    planned_id = planned["point_id"]
    if fault is not None:
        planned, fault = _fault_point(run_dir, planned, fault)
        valid = False
        reasons = [fault_reason(fault.get("evidence"))] + _string_list(reasons, "reasons")
    document = _point_document(run, planned, {
        "metrics": metrics, "valid": valid, "reasons": reasons, "warnings": warnings, "environment": environment,
        "started_at": started_at, "finished_at": finished_at, "raw": raw or {}, "sources": sources, "extra": extra})
    if fault is not None:
        document.update(verdict="fault", evidence=fault.get("evidence"), attempt=fault["attempt"],
                        planned_point_id=planned_id)
    # Where the code and the command that measured it came from: the run's last invocation (open_run).
    if run.get("invocations") and "provenance" not in document["environment"].get("controller", {}):
        controller = dict(document["environment"].get("controller") or {})
        controller["provenance"] = run["invocations"][-1]
        document["environment"] = dict(document["environment"], controller=controller)
    validate_document(document)
    json.dumps(document, allow_nan=False)
    ident = document["point_id"]
    doc_path = os.path.join(run_dir, ident + ".json")

    def replaceable(existing):
        if existing is None or overwrite or (replace_invalid and existing.get("valid") is not True):
            return True
        raise ResultError(f"point {ident} is already stored in {doc_path}; pass overwrite=true to replace it")

    def same_machines():
        moved = other_machines(run_dir, document["environment"])
        if moved:
            raise ResultError(
                f"not storing point {ident} in run {run['run_id']}: {'; '.join(moved)}. A run is measured on one "
                f"set of machines: start a new run for these (-e testbed_run_id=new), or point the inventory back "
                f"at the machines the run was measured on.")

    if not write:
        same_machines()
        existing, _problem = point_docs(run_dir, {"plan": [planned]}).get(ident, (None, None))
        replaceable(existing)
        return document

    with RunLock(run_dir):
        same_machines()
        old_raw = []
        existing, _problem = point_docs(run_dir, {"plan": [planned]}).get(ident, (None, None))
        if replaceable(existing) and existing is not None:
            if overwrite:
                old_raw = existing.get("raw_files") or []
            else:
                supersede(run_dir, ident, existing)
        # An unreadable leftover (problem is set) is not a stored point: replace it.
        _write_point(run_dir, document, raw or {}, old_raw)
        try:
            refresh_index(run_dir, run=run)
        except OSError as exc:
            raise IndexWriteError(doc_path, exc) from exc
    return document


def _fault_point(run_dir, planned, fault):
    """The planned point renamed as this fault's document (``__fault<N>`` before ``__rep``), and the fault."""
    ident = planned["point_id"]
    if not isinstance(fault, dict):
        raise ResultError(f"fault must be a mapping with the evidence (and an attempt), got {fault!r}")
    if fault.get("attempt") is None:
        fault = dict(fault, attempt=len(fault_documents(run_dir, ident)) + 1)
    attempt = fault["attempt"]
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise ResultError(f"fault attempt must be a whole number >= 1, got {fault!r}")
    cut = ident.rindex("__rep")
    return dict(planned, point_id=f"{ident[:cut]}__fault{attempt}{ident[cut:]}"), fault


def _point_document(run, planned, given):
    """The document of one point from what the caller gave (checked field by field, one sentence each)."""
    metrics, raw, sources, extra = given["metrics"], given["raw"], given["sources"], given["extra"]
    if not isinstance(metrics, dict):
        raise ResultError(f"metrics must be a flat mapping of name -> number, string, boolean or null, got {type(metrics).__name__}")
    reasons = _string_list(given["reasons"], "reasons")
    warnings = _string_list(given["warnings"], "warnings")
    environment = normalize_environment(given["environment"])
    started = parse_timestamp(given["started_at"], "started_at")
    finished = parse_timestamp(given["finished_at"], "finished_at")
    duration = (finished - started).total_seconds()
    if duration < 0:
        raise ResultError(f"finished_at {format_timestamp(finished)} is before started_at {format_timestamp(started)}")
    if not isinstance(raw, dict):
        raise ResultError(f"raw must be a mapping of name -> text, got {raw!r}")
    for name, text in raw.items():
        if not isinstance(name, str) or not _RAW_NAME.match(name):
            raise ResultError(f"raw file name {name!r} is not safe (letters, digits, '_', '.', '-')")
        if not isinstance(text, str):
            raise ResultError(f"raw.{name} must be text, got {type(text).__name__}")
    clean_sources = {}
    for name, result in (sources or {}).items():
        if not isinstance(result, dict):
            raise ResultError(f"sources.{name} must be a parser result mapping, got {result!r}")
        clean_sources[name] = {k: v for k, v in result.items() if k != "raw"}
    if extra is not None and not isinstance(extra, dict):
        raise ResultError(f"extra must be a mapping, got {extra!r}")
    ident = planned["point_id"]
    return {
        "schema_version": SCHEMA_VERSION,
        "experiment": run["experiment"],
        "run_id": run["run_id"],
        "point_id": ident,
        "variant": planned["variant"],
        "parameters": planned["parameters"],
        "repetition": planned["repetition"],
        "metrics": dict(metrics),
        "units": units_for(metrics),
        "valid": given["valid"],
        "reasons": reasons,
        "warnings": warnings,
        "environment": environment,
        "started_at": format_timestamp(started),
        "finished_at": format_timestamp(finished),
        "duration_s": round(duration, 6),
        "raw_files": [f"{RAW_DIR}/{ident}.{name}" for name in sorted(raw)],
        "sources": clean_sources,
        "extra": dict(extra or {}),
    }


def _write_point(run_dir, document, raw, old_raw):
    """Raw files, then the document (the document makes the point); stale raw files of an overwritten one go."""
    ident = document["point_id"]
    written = []
    try:
        for name in sorted(raw):
            raw_path = os.path.join(run_dir, RAW_DIR, f"{ident}.{name}")
            if not os.path.exists(raw_path):
                written.append(raw_path)
            write_text_atomic(raw_path, raw[name])
        write_json_atomic(os.path.join(run_dir, ident + ".json"), document)
    except BaseException:
        # No document, so no point: leave no raw files of it behind either.
        for raw_path in written:
            if os.path.exists(raw_path):
                os.unlink(raw_path)
        raise
    for stale in old_raw:
        if stale not in document["raw_files"] and isinstance(stale, str) and stale.startswith(RAW_DIR + "/" + ident + "."):
            try:
                os.unlink(os.path.join(run_dir, stale))
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise


SUPERSEDED_DIR = "superseded"


def supersede(run_dir, ident, document):
    """Move an invalid point's document and raw outputs to ``superseded/<ident>.<n>/`` (n = 1, 2, ...).

    Used when an invalid point is measured again (``replace_invalid``): the
    new measurement takes the point's name, the old one stays readable.
    Returns the directory it went to.
    """
    number = 1
    while os.path.exists(os.path.join(run_dir, SUPERSEDED_DIR, f"{ident}.{number}")):
        number += 1
    target = os.path.join(run_dir, SUPERSEDED_DIR, f"{ident}.{number}")
    make_private_dirs(os.path.join(target, RAW_DIR))
    for name in document.get("raw_files") or []:
        if isinstance(name, str) and name.startswith(RAW_DIR + "/" + ident + ".") and "/" not in name[len(RAW_DIR) + 1:]:
            source = os.path.join(run_dir, name)
            if os.path.exists(source):
                os.rename(source, os.path.join(target, name))
    os.rename(os.path.join(run_dir, ident + ".json"), os.path.join(target, ident + ".json"))
    fsync_dir(run_dir)
    return target


def with_controller(environment):
    """The environment of a point plus the controller's versions (for modules run on the controller).

    ``environment`` is {hosts: {name: facts}, controller: {...}} or one host's facts
    (``hostname`` set), which is wrapped as {hosts: {hostname: facts}}. Values already in
    ``controller`` win; anything that is not a dict is returned unchanged.
    """
    if not isinstance(environment, dict):
        return environment
    environment = dict(environment)
    if "hosts" not in environment and isinstance(environment.get("hostname"), str):
        environment = {"hosts": {environment["hostname"]: environment}}
    controller = environment.get("controller")
    if controller is None:
        controller = {}
    if not isinstance(controller, dict):
        return environment
    controller = dict(controller)
    if ANSIBLE_CORE_VERSION:
        controller.setdefault("ansible_core_version", ANSIBLE_CORE_VERSION)
    controller.setdefault("python_version", platform.python_version())
    controller.setdefault("hostname", socket.gethostname())
    environment["controller"] = controller
    return environment
