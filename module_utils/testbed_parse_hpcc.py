# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for HPC Challenge's ``hpccoutf.txt`` (hpcc 1.5.0 of Debian 12; 1.4.x has the same summary).

``parse(text, source="<content>")`` returns the common parse result (see
``testbed_parse``).  hpcc writes no report on stdout: it appends to
``hpccoutf.txt`` in its working directory, one block per run, each ending with::

    Begin of Summary section.
    VersionMajor=1
    ...
    HPL_Tflops=0.00198986
    ...
    End of Summary section.

The last summary of the file is read (an earlier one, from an earlier run in
the same directory, gives a warning).  Values of ``-1`` mean "not run" (the
ping-pong and ring tests with one process): such metrics are null with a
warning.  Validity, from the same run's text:

* ``Success=1`` in the summary;
* the HPL scaled residual, recomputed from the summary
  (``HPL_RnormI / (HPL_eps * (HPL_AnormI * HPL_XnormI + HPL_BnormI) * HPL_N)``,
  as HPL prints it) below the threshold HPL announces (``less than 16.0``),
  and no ``tests completed and failed residual checks``;
* no ``Node(s) with error N`` with N > 0, no RandomAccess ``(failed)``, no
  STREAM ``Failed Validation``, ``*RandomAccess*_ErrorsFraction`` at most 1 %
  (HPCC's own rule).

A file without a complete summary (hpcc killed, out of memory, truncated) is
a ParseError.  Versions and variants: docs/parsers.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse import (
    NUM,
    ParseError,
    invalidate,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "hpcc"

BEGIN = "Begin of Summary section."
END = "End of Summary section."
BANNER = "This is the DARPA/DOE HPC Challenge Benchmark"
PAIR = re.compile(r"^(?P<key>[A-Za-z_][\w]*)=(?P<value>.*?)\s*$")

# metric name -> (summary key, scale)
METRICS = (
    ("hpl_gflops", "HPL_Tflops", 1000.0),
    ("hpl_time_s", "HPL_time", 1.0),
    ("star_stream_copy_gb_s", "StarSTREAM_Copy", 1.0),
    ("star_stream_scale_gb_s", "StarSTREAM_Scale", 1.0),
    ("star_stream_add_gb_s", "StarSTREAM_Add", 1.0),
    ("star_stream_triad_gb_s", "StarSTREAM_Triad", 1.0),
    ("single_stream_copy_gb_s", "SingleSTREAM_Copy", 1.0),
    ("single_stream_scale_gb_s", "SingleSTREAM_Scale", 1.0),
    ("single_stream_add_gb_s", "SingleSTREAM_Add", 1.0),
    ("single_stream_triad_gb_s", "SingleSTREAM_Triad", 1.0),
    ("single_random_access_gups", "SingleRandomAccess_GUPs", 1.0),
    ("star_random_access_gups", "StarRandomAccess_GUPs", 1.0),
    ("mpi_random_access_gups", "MPIRandomAccess_GUPs", 1.0),
    ("star_dgemm_gflops", "StarDGEMM_Gflops", 1.0),
    ("single_dgemm_gflops", "SingleDGEMM_Gflops", 1.0),
    ("ptrans_gb_s", "PTRANS_GBs", 1.0),
    ("star_fft_gflops", "StarFFT_Gflops", 1.0),
    ("single_fft_gflops", "SingleFFT_Gflops", 1.0),
    ("mpi_fft_gflops", "MPIFFT_Gflops", 1.0),
)
INTEGERS = (("hpl_n", "HPL_N"), ("hpl_nb", "HPL_NB"), ("procs", "CommWorldProcs"),
            ("stream_threads", "STREAM_Threads"))
REQUIRED = ("HPL_Tflops", "HPL_N", "CommWorldProcs", "Success")


def _summary(text, source):
    """(start, end, pairs) of the last complete summary; ParseError when there is none."""
    end = text.rfind(END)
    begin = text.rfind(BEGIN, 0, end if end >= 0 else len(text))
    if begin < 0:
        if BANNER in text:
            raise ParseError(TOOL, source, "no 'Begin of Summary section.': hpcc stopped before the end of its run "
                                           "(killed, out of memory, or the file is truncated)")
        raise ParseError(TOOL, source, "no 'Begin of Summary section.': not an hpccoutf.txt (hpcc writes its report "
                                       "to hpccoutf.txt in its working directory, not to stdout)")
    if end < begin:
        raise ParseError(TOOL, source, "the summary section has no 'End of Summary section.': the file is truncated "
                                       "(hpcc still running, or killed while writing it)")
    pairs = {}
    for line in text[begin + len(BEGIN):end].splitlines():
        if not line.strip():
            continue
        match = PAIR.match(line.strip())
        if match is None:
            raise ParseError(TOOL, source, "summary line %r is not key=value" % line.strip())
        pairs[match.group("key")] = match.group("value")
    missing = [key for key in REQUIRED if key not in pairs]
    if missing:
        raise ParseError(TOOL, source, "the summary lacks %s (damaged file?)" % ", ".join(missing))
    return begin, end, pairs


def _value(pairs, key, source):
    return to_number(pairs[key], TOOL, source, key)


def parse(text, source="<content>"):
    """Parse an hpccoutf.txt; see the module docstring."""
    text = require_text(text, TOOL, source)
    begin, end, pairs = _summary(text, source)
    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    earlier = text.count(BEGIN, 0, begin)
    run_start = text.rfind(BANNER, 0, begin)
    run_text = text[run_start if run_start >= 0 else 0:end]
    if earlier:
        warn(result, "the file holds %d earlier run(s) (hpcc appends to hpccoutf.txt); the last one is read"
             % earlier)
    details["runs_in_file"] = earlier + 1
    details["version"] = ".".join(pairs.get(key, "?") for key in ("VersionMajor", "VersionMinor", "VersionMicro")) \
        + pairs.get("VersionRelease", "")
    details["summary"] = pairs

    for name, key, scale in METRICS:
        if key not in pairs:
            metrics[name] = None
            warn(result, "%s is null: hpcc %s prints no %s" % (name, details["version"], key))
            continue
        value = _value(pairs, key, source)
        if value == -1:
            metrics[name] = None
            warn(result, "%s is null: %s=-1 (test not run)" % (name, key))
        else:
            metrics[name] = value * scale
    for name, key in INTEGERS:
        metrics[name] = to_number(pairs[key], TOOL, source, key, integer=True) if key in pairs else None

    residual = None
    keys = ("HPL_RnormI", "HPL_eps", "HPL_AnormI", "HPL_XnormI", "HPL_BnormI", "HPL_N")
    if all(key in pairs for key in keys):
        rnorm, eps, anorm, xnorm, bnorm, n = (_value(pairs, key, source) for key in keys)
        denominator = eps * (anorm * xnorm + bnorm) * n
        residual = rnorm / denominator if denominator > 0 else None
    metrics["hpl_scaled_residual"] = residual
    threshold = re.findall(r"scaled residuals are less than\s+(%s)" % NUM, run_text)
    details["hpl_threshold"] = to_number(threshold[-1], TOOL, source, "HPL threshold") if threshold else 16.0

    _verdict(result, pairs, run_text, source)
    return result


def _verdict(result, pairs, run_text, source):
    metrics = result["metrics"]
    threshold = result["details"]["hpl_threshold"]
    if pairs["Success"].strip() != "1":
        invalidate(result, "hpcc reports Success=%s (a test failed its verification)" % pairs["Success"])
    if metrics["hpl_scaled_residual"] is None:
        invalidate(result, "the HPL scaled residual cannot be computed from the summary")
    elif not metrics["hpl_scaled_residual"] < threshold:
        invalidate(result, "HPL scaled residual %.6g is not below the threshold %s: the solution is wrong"
                   % (metrics["hpl_scaled_residual"], threshold))
    failed = re.findall(r"^\s*(\d+) tests? completed and failed residual checks", run_text, re.MULTILINE)
    if any(int(count) for count in failed):
        invalidate(result, "HPL: %s test(s) failed the residual check" % max(int(count) for count in failed))
    if metrics["hpl_gflops"] is not None and metrics["hpl_gflops"] <= 0:
        invalidate(result, "HPL_Tflops is %s" % pairs["HPL_Tflops"])
    section = None
    for line in run_text.splitlines():
        begin = re.match(r"^Begin of (\w+) section\.", line)
        if begin:
            section = begin.group(1)
            continue
        nodes = re.match(r"^Node\(s\) with error (\d+)", line)
        if nodes and int(nodes.group(1)):
            invalidate(result, "%s: %s process(es) reported an error" % (section, nodes.group(1)))
        if re.search(r"Failed Validation", line):
            invalidate(result, "%s: %s" % (section, line.strip()))
        if re.match(r"^Found \d+ errors in \d+ locations \(failed\)", line):
            invalidate(result, "%s: %s" % (section, line.strip()))
    for key in sorted(pairs):
        if key.endswith("RandomAccess_ErrorsFraction") or key.endswith("RandomAccess_LCG_ErrorsFraction"):
            fraction = to_number(pairs[key], TOOL, source, key)
            if fraction > 0.01:
                invalidate(result, "%s=%s is above HPCC's 1 %% limit" % (key, pairs[key]))
