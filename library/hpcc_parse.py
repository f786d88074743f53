#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: hpcc_parse
short_description: Parse HPC Challenge's hpccoutf.txt summary (HPL, STREAM, RandomAccess, DGEMM, FFT, PTRANS)
description:
  - hpcc reads C(hpccinf.txt) from its working directory and B(appends) its report to C(hpccoutf.txt) there;
    it prints nothing on stdout. Give this module the text of C(hpccoutf.txt) (versions in docs/parsers.md).
  - "Debian's hpcc 1.5.0 is linked with Open MPI and runs as a single process without a launcher: plain C(hpcc)
    in a scratch directory (also as root; C(mpirun --allow-run-as-root -np N hpcc) for N processes). With one
    process set C(Ps) and C(Qs) to 1 in C(hpccinf.txt); without C(hpccinf.txt) hpcc warns on stderr and runs
    built-in defaults (N=2560)."
  - The last C(Begin of Summary section.) ... C(End of Summary section.) block (C(key=value) lines) is read;
    earlier runs in the same file give a warning. A value of C(-1) (test not run, such as the ping-pong tests
    with one process) gives a null metric with a warning.
  - "Validity: C(Success=1); the HPL scaled residual recomputed from the summary
    (C(HPL_RnormI / (HPL_eps * (HPL_AnormI * HPL_XnormI + HPL_BnormI) * HPL_N))) below the threshold of the run
    (C(less than 16.0)) and no failed residual check; no C(Node(s) with error N) above 0, no RandomAccess
    C((failed)), no STREAM C(Failed Validation), every C(*RandomAccess*_ErrorsFraction) at most 1 %."
  - A file without a complete summary (hpcc killed or out of memory, file truncated, stdout given instead)
    makes the module fail.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Run hpcc once in its scratch directory (hpccinf.txt already there)
  ansible.builtin.command:
    argv: [hpcc]
    chdir: /var/tmp/bench/hpcc
  environment:
    LC_ALL: C
  changed_when: true

- name: Parse the report it appended to
  hpcc_parse:
    src: /var/tmp/bench/hpcc/hpccoutf.txt
  register: __bench_hpcc

- name: Use HPL and STREAM
  ansible.builtin.debug:
    msg: "{{ __bench_hpcc.metrics.hpl_gflops }} GFLOP/s, triad {{ __bench_hpcc.metrics.single_stream_triad_gb_s }} GB/s"
"""

RETURN = r"""
tool:
  description: Always C(hpcc).
  returned: success
  type: str
  sample: hpcc
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement (see the description).
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Earlier runs in the file, tests not run (-1).
  returned: success
  type: list
  elements: str
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    version:
      description: hpcc version from the summary.
      type: str
      sample: 1.5.0f
    summary:
      description: Every key=value of the summary, as text.
      type: dict
    hpl_threshold:
      description: The HPL residual threshold of the run.
      type: float
      sample: 16.0
    runs_in_file:
      description: Runs in the file (the last one is read).
      type: int
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name (C(_gb_s) GB/s as hpcc prints, 10^9 bytes/s). Null where the test did not run.
  returned: success
  type: dict
  contains:
    hpl_gflops:
      description: HPL rate (C(HPL_Tflops) x 1000).
      type: float
      sample: 1.98986
    hpl_time_s:
      description: HPL solve time.
      type: float
    hpl_n:
      description: HPL problem size.
      type: int
    hpl_nb:
      description: HPL block size.
      type: int
    hpl_scaled_residual:
      description: The HPL scaled residual (must be below the threshold).
      type: float
    procs:
      description: MPI processes (C(CommWorldProcs)).
      type: int
    stream_threads:
      description: Threads per STREAM process.
      type: int
    star_stream_copy_gb_s:
      description: StarSTREAM Copy (every process at once, per process).
      type: float
    star_stream_scale_gb_s:
      description: StarSTREAM Scale.
      type: float
    star_stream_add_gb_s:
      description: StarSTREAM Add.
      type: float
    star_stream_triad_gb_s:
      description: StarSTREAM Triad.
      type: float
    single_stream_copy_gb_s:
      description: SingleSTREAM Copy (one process).
      type: float
    single_stream_scale_gb_s:
      description: SingleSTREAM Scale.
      type: float
    single_stream_add_gb_s:
      description: SingleSTREAM Add.
      type: float
    single_stream_triad_gb_s:
      description: SingleSTREAM Triad.
      type: float
    single_random_access_gups:
      description: SingleRandomAccess, GUP/s.
      type: float
    star_random_access_gups:
      description: StarRandomAccess, GUP/s.
      type: float
    mpi_random_access_gups:
      description: MPIRandomAccess, GUP/s.
      type: float
    star_dgemm_gflops:
      description: StarDGEMM.
      type: float
    single_dgemm_gflops:
      description: SingleDGEMM.
      type: float
    ptrans_gb_s:
      description: PTRANS.
      type: float
    star_fft_gflops:
      description: StarFFT.
      type: float
    single_fft_gflops:
      description: SingleFFT.
      type: float
    mpi_fft_gflops:
      description: MPIFFT.
      type: float
ansible_facts:
  description: The same result under C(ansible_facts.hpcc).
  returned: success
  type: dict
  contains:
    hpcc:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_hpcc import parse  # noqa: E402


def main():
    run_parse_module("hpcc", parse)


if __name__ == "__main__":
    main()
