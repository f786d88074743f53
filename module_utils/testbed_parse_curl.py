# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``curl -w '%{json}'`` (curl 7.70+): one transfer's timings, sizes and rate.

``parse(text, source="<content>")`` returns the common parse result (see
``testbed_parse``).  Run curl with the body elsewhere (``-o /dev/null`` for a
download, ``-T FILE`` for an upload) and ``-w '%{json}\\n'``: stdout is then one
JSON object per URL with every ``-w`` variable (``time_starttransfer``,
``time_total``, ``size_download``, ``speed_download``, ``exitcode``,
``errormsg``...).  This is the time to the first byte that lftp cannot give.

* ``first_byte_s`` is ``time_starttransfer`` (for an upload: when the upload
  could start); ``transfer_s`` is ``time_total - time_starttransfer``;
  ``rate_mib_s`` is curl's own ``speed_download``/``speed_upload`` (bytes over
  ``time_total``) in MiB/s.
* ``exitcode`` != 0 with nothing transferred is a ParseError naming curl's
  ``errormsg``; with bytes transferred (a partial transfer) the result is
  ``valid: false``.
* For FTP, curl 7.88 reports ``time_pretransfer`` (and ``time_starttransfer``
  of a fast server) a little below ``time_connect`` (its FTP timers); they are
  kept as printed.

Versions and variants: docs/parsers.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils.testbed_parse import (
    ParseError,
    invalidate,
    new_result,
    require_text,
    to_number,
)

TOOL = "curl"
MIB = 1024.0 * 1024.0
REQUIRED = ("exitcode", "time_starttransfer", "time_total", "size_download", "size_upload",
            "speed_download", "speed_upload")


def _objects(text, source):
    objects = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            document = json.loads(line, parse_constant=lambda name: (never for never in ()).throw(ValueError(name)))
        except ValueError as exc:
            raise ParseError(TOOL, source, "line %d starts a JSON object that does not decode (%s): truncated "
                                           "output?" % (number, exc)) from None
        if isinstance(document, dict):
            objects.append(document)
    return objects


def parse(text, source="<content>"):
    """Parse the %{json} object curl printed for one URL; see the module docstring."""
    text = require_text(text, TOOL, source)
    objects = _objects(text, source)
    if not objects:
        if "curl: (" in text:
            raise ParseError(TOOL, source, "no -w '%%{json}' object; curl said: %s" % text.strip().splitlines()[-1])
        raise ParseError(TOOL, source, "no JSON object: run curl with -w '%{json}\\n' (curl 7.70 or later) and the "
                                       "body elsewhere (-o /dev/null), or not curl output?")
    if len(objects) > 1:
        raise ParseError(TOOL, source, "holds %d -w objects (several URLs); give curl one URL per run" % len(objects))
    doc = objects[0]
    missing = [key for key in REQUIRED if key not in doc]
    if missing:
        raise ParseError(TOOL, source, "the -w object lacks %s: not a %%{json} object of curl 7.70+"
                         % ", ".join(missing))
    values = dict((key, to_number(doc[key], TOOL, source, key)) for key in REQUIRED)
    exitcode = int(values["exitcode"])
    upload = values["size_upload"] > 0
    size = int(values["size_upload"] if upload else values["size_download"])
    if exitcode and size == 0:
        raise ParseError(TOOL, source, "curl exited %d: %s" % (exitcode, doc.get("errormsg") or "no error message"))

    result = new_result(TOOL, source)
    metrics = result["metrics"]
    metrics["direction"] = "put" if upload else "get"
    metrics["transferred_bytes"] = size
    metrics["first_byte_s"] = values["time_starttransfer"]
    metrics["connect_s"] = to_number(doc["time_connect"], TOOL, source, "time_connect") if "time_connect" in doc \
        else None
    metrics["total_s"] = values["time_total"]
    metrics["transfer_s"] = values["time_total"] - values["time_starttransfer"]
    metrics["rate_mib_s"] = (values["speed_upload"] if upload else values["speed_download"]) / MIB
    metrics["response_code"] = doc.get("response_code")
    result["details"] = dict((key, doc.get(key)) for key in (
        "url", "scheme", "exitcode", "errormsg", "num_connects", "time_namelookup", "time_pretransfer",
        "remote_ip", "remote_port", "curl_version"))
    if exitcode:
        invalidate(result, "curl exited %d after %d bytes: %s" % (exitcode, size, doc.get("errormsg")))
    if size == 0:
        invalidate(result, "no byte was transferred")
    return result
