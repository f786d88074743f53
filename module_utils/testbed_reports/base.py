# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared constants of the report and its error (ReportError: input that cannot produce a report).

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""


FORMATS = ("md", "html", "csv", "png", "tex")


INVALID_MARK = "\u26a0"  # ⚠


SIGNIFICANT_MARK = "\u2731"  # ✱


CLIPPED_MARK = "\u2021"  # ‡


CONFIDENCE = 0.95


VERDICTS = ("valid", "invalid", "fault")


REASON_CHARS = 160


CLIP_NOTE = (f"{CLIPPED_MARK} the {CONFIDENCE * 100:.0f} % interval reached below 0 for a metric that cannot be "
             "negative; its low end is shown clipped at 0 (+upper/\u2212lower; summary.csv keeps the raw interval).")


class ReportError(Exception):
    """Input that cannot produce a report; main() turns it into exit status 2."""
