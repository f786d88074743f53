# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rendering the block model to Markdown and to HTML.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import base64
import html
import os


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _siblings(base_dir, path):
    """The chart's other formats that exist beside it: [(format, relative path)] (SVG, PDF)."""
    if not base_dir or not path.endswith(".png"):
        return []
    return [(fmt, path[:-4] + "." + fmt.lower()) for fmt in ("SVG", "PDF")
            if os.path.isfile(os.path.join(base_dir, path[:-4] + "." + fmt.lower()))]


def render_md(blocks, base_dir=None):
    """Markdown; ``details`` blocks go to appendix sections at the end (Markdown cannot fold them).
    With ``base_dir`` (the run directory) a chart's SVG and PDF beside its PNG are linked under it."""
    out, appendix = [], []
    for block in blocks:
        if block[0] == "details":
            appendix.append(("h", 2, f"Appendix: {block[1]}"))
            appendix.extend(block[2])
            out.append(f"Full text: see \u201cAppendix: {block[1]}\u201d below.\n")
            continue
        out.append(_md_block(block, base_dir))
    out.extend(_md_block(block, base_dir) for block in appendix)
    return "\n".join(out)


def _md_block(block, base_dir=None):
    kind = block[0]
    if kind == "h":
        return "{} {}\n".format("#" * block[1], block[2])
    if kind == "p":
        return block[1] + "\n"
    if kind == "list":
        return "\n".join(f"- {item}" for item in block[1]) + "\n"
    if kind == "table":
        header, rows = block[1], block[2]
        lines = ["| {} |".format(" | ".join(md_cell(h) for h in header)),
                 "|{}|".format("|".join([" --- "] + [" ---: "] * (len(header) - 1)))]
        lines.extend("| {} |".format(" | ".join(md_cell(c) for c in row)) for row in rows)
        return "\n".join(lines) + "\n"
    if kind == "img":
        links = " \u00b7 ".join(f"[{fmt}]({path})" for fmt, path in _siblings(base_dir, block[1]))
        return f"![{block[2]}]({block[1]})\n" + (f"\n{links}\n" if links else "")
    raise ValueError(f"unknown block {kind!r}")


def _inline_html(text):
    parts = str(text).split("`")
    out = []
    for index, part in enumerate(parts):
        escaped = html.escape(part)
        out.append(f"<code>{escaped}</code>" if index % 2 and index < len(parts) - 1 else escaped)
    return "".join(out)


CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 72em;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #ccc; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #ddd; margin-top: 2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .3em .6em; }
th { background: #f2f2f2; }
td { text-align: right; white-space: nowrap; }
td:first-child, th:first-child { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
code { background: #f3f3f3; padding: 0 .2em; border-radius: 3px; }
img { max-width: 100%; border: 1px solid #eee; margin: .5em 0 1.5em; }
details { margin: .5em 0 1em; } summary { cursor: pointer; color: #555; }
"""


def _inline_image(base_dir, path):
    """The chart as a data: URI (its SVG when there is one, else the file itself), or None when
    ``base_dir`` is not given or the file is missing (the page then links it)."""
    if not base_dir or not path.endswith(".png"):
        return None
    for candidate, mime in ((path[:-4] + ".svg", "image/svg+xml"), (path, "image/png")):
        if os.path.isfile(os.path.join(base_dir, candidate)):
            with open(os.path.join(base_dir, candidate), "rb") as handle:
                return f"data:{mime};base64," + base64.b64encode(handle.read()).decode("ascii")
    return None


def _html_blocks(blocks, base_dir=None):
    out = []
    for block in blocks:
        kind = block[0]
        if kind == "h":
            out.append("<h{0}>{1}</h{0}>".format(block[1], _inline_html(block[2])))
        elif kind == "p":
            out.append(f"<p>{_inline_html(block[1])}</p>")
        elif kind == "list":
            out.append("<ul>{}</ul>".format("".join(f"<li>{_inline_html(i)}</li>" for i in block[1])))
        elif kind == "table":
            out.append("<table><thead><tr>{}</tr></thead><tbody>".format("".join(
                f"<th>{_inline_html(h)}</th>" for h in block[1])))
            for row in block[2]:
                out.append("<tr>{}</tr>".format("".join(f"<td>{_inline_html(c)}</td>" for c in row)))
            out.append("</tbody></table>")
        elif kind == "img":
            source = _inline_image(base_dir, block[1]) or block[1]
            out.append(f'<p><img src="{html.escape(source)}" alt="{html.escape(block[2])}"></p>')
        elif kind == "details":
            out.append(f"<details><summary>{_inline_html(block[1])}</summary>")
            out.extend(_html_blocks(block[2], base_dir))
            out.append("</details>")
    return out


def render_html(blocks, title, base_dir=None):
    """One HTML page; with ``base_dir`` (the run directory) it holds its charts (data: URIs), so the
    file alone is the whole report."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title>", f"<style>{CSS}</style>", "</head><body>"]
    out.extend(_html_blocks(blocks, base_dir))
    out.append("</body></html>")
    return "\n".join(out) + "\n"
