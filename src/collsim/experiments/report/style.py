"""The reproduction report's style sheet: inline CSS, no web fonts, readable when printed."""

from __future__ import annotations

CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
  font-size: 16px; line-height: 1.5; color: #1b1f24; background: #fff; margin: 0; }
main { max-width: 76rem; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.8rem; margin: 0.5rem 0 0.25rem; } h3 { font-size: 1.15rem; margin: 1.75rem 0 0.5rem; }
h2 { font-size: 1.45rem; margin: 2.5rem 0 0.75rem; padding-top: 0.5rem; border-top: 2px solid #d0d7de; }
p.citation { color: #444c56; margin-top: 0; }
nav { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.5rem 1rem; }
nav ol { margin: 0.25rem 0; padding-left: 1.5rem; }
a { color: #0550ae; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em;
  background: #f6f8fa; padding: 0 0.2em; border-radius: 3px; word-break: break-all; }
.scroll { overflow: auto; margin: 0.5rem 0 1.25rem; border: 1px solid #d0d7de; border-radius: 6px;
  box-sizing: border-box; }
.scroll.long { max-height: 34rem; }
.scroll.fit { width: fit-content; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.9rem; width: 100%; }
table[data-kind="data"] { width: auto; min-width: 28rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 0.5rem 0.6rem; background: #f6f8fa;
  border-bottom: 1px solid #d0d7de; }
th, td { padding: 0.3rem 0.6rem; border-bottom: 1px solid #e5e8eb; vertical-align: top; text-align: left; }
thead th { background: #eaeef2; position: sticky; top: 0; }
th.num { text-align: right; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { min-width: 18rem; }
td.quantity { min-width: 10rem; } td.nw { white-space: nowrap; }
td.item { min-width: 5rem; }
tr.differs { background: #fff1f0 !important; }
.no, .missing { color: #a40e26; font-weight: 700; }
.yes { color: #116329; } .na { color: #57606a; }
figure { margin: 1rem 0 1.5rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; border-radius: 6px; background: #fff; }
.figbox { overflow-x: auto; }
.zoom:checked ~ .figbox img { max-width: none; }
label.zoom-label { font-size: 0.9rem; color: #444c56; margin-left: 0.25rem; }
figcaption { color: #1b1f24; font-size: 0.95rem; margin-top: 0.35rem; max-width: 60rem; }
ul.notes li { margin: 0.2rem 0; }
.summary-line { font-size: 1.05rem; }
@media print { .scroll.long { max-height: none; overflow: visible; } nav { display: none; } }
"""
