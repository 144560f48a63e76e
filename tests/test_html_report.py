"""The HTML report of ``reproduce all`` (collsim.experiments.report.html), issue #12.

Two kinds of test:

* fast structural tests parse the HTML with the standard library (tables and their
  captions, embedded PNGs that decode, escaping, discrepancies, notes, provenance,
  deterministic bytes, no external references);
* browser tests open the written file (``file://``) in Debian's headless Chromium
  through chromedriver and selenium, and check what a reader would get: no console
  messages at level SEVERE (a Content-Security-Policy violation, a broken image or a
  failed request all land there), every ``<img>`` decoded (``naturalWidth > 0``),
  every expected table with its caption, and no request leaving the file
  (``performance.getEntriesByType('resource')`` may list only ``data:`` and
  ``file:`` URLs).  A negative control checks that these probes do see an external
  image.  When Chromium, chromedriver or selenium is missing the browser tests
  FAIL if the environment variable ``CI`` is set (``.ci/run`` sets it) and are
  skipped, with the reason, otherwise.

External references: the report may mention ``http://``/``https://`` URLs only as
plain text (a citation's DOI), never in an attribute (``src``, ``href``, ``srcset``
...) nor in the CSS (``url(``, ``@import``); :class:`_Page` collects both and the
tests assert they are empty.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import struct
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from collsim.experiments.report.html import NOT_A_CHECKOUT, environment, render_report, write_report
from collsim.experiments.report.paperout import Comparison, PaperResult, pyplot, save_figure, write_csv

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
RESOURCE_ATTRS = {"src", "href", "srcset", "poster", "data", "action", "formaction", "background", "xlink:href",
                  "cite", "ping", "manifest", "icon"}


class _Page(HTMLParser):
    """Tables (caption, rows), images, resource attributes and the inline CSS of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self.images: list[dict] = []
        self.resource_refs: list[tuple[str, str, str]] = []
        self.css = ""
        self.text: list[str] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k, v in attrs:
            if k in RESOURCE_ATTRS and v is not None:
                self.resource_refs.append((tag, k, v))
        if tag == "table":
            self.tables.append({"id": a.get("id"), "kind": a.get("data-kind"), "caption": "", "rows": 0})
        elif tag == "tr" and self.tables and "thead" not in self._stack:
            self.tables[-1]["rows"] += 1
        elif tag == "img":
            self.images.append(a)
        if tag not in ("img", "meta", "br", "hr", "link", "input"):
            self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass

    def handle_data(self, data):
        if self._stack and self._stack[-1] == "style":
            self.css += data
        elif "caption" in self._stack and self.tables:
            self.tables[-1]["caption"] += data
        else:
            self.text.append(data)


def _parse(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    p.close()
    return p


def _figure(out: Path, name: str, n: int, width: float = 4) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(width, 2.5))
    ax.plot(range(n), [i * i for i in range(n)], marker="o", label="steps")
    ax.set_xlabel("N")
    ax.set_ylabel("steps")
    ax.legend()
    save_figure(fig, out, name)


def _results(root: Path) -> list[PaperResult]:
    a, b = root / "optree", root / "mlfm"
    a.mkdir()
    b.mkdir()
    _figure(a, "fig4", 5)
    _figure(a, "fig5", 8)
    _figure(b, "fig7", 4)
    _figure(b, "fig8", 30, width=16)  # ~1900 px: wider than the text column
    write_csv(a / "fig4.csv", [{"n": n, "depth": d, "time_s": t} for n, d, t in
                               ((512, 5, 0.0123), (1024, 7, 0.0456), (2048, 7, 0.0789))])
    write_csv(b / "fig7.csv", [{"radix": r, "throughput": r / 10} for r in range(4, 64)])
    optree = PaperResult(
        "optree", "[OpTree24] OpTree, https://doi.org/10.0000/example", a,
        figures=("fig4", "fig5"), tables=("fig4.csv",),
        comparisons=(Comparison("Table 1", "Ring steps, N=1024, w=64", "steps", 1023, 1023, "schedule"),
                     Comparison("Table 1", "OSM steps, N=1024, w=64", "steps", 128, 2048, "schedule",
                                "the printed 128 is <inconsistent> with ⌈N²/(8w)⌉ & its own formula"),
                     Comparison("Fig. 5", "OpTree time", "s", None, 0.5, "eq3")),
        notes=("w = 64 wavelengths per fiber", "block size d = 4 MiB (2^20 bytes)"),
        captions={"fig4": "Optimal depth against N (eq3 model).", "fig5": "Steps against N (schedule)."})
    mlfm = PaperResult(
        "mlfm", "[MLFM] Multi-layer full mesh", b, figures=("fig7", "fig8"), tables=("fig7.csv",),
        comparisons=(Comparison("Fig. 7", "saturation throughput", "%", 72.97, 70.1, "flow simulator"),),
        notes=("radix 36",), captions={"fig7": "Throughput against radix.", "fig8": "A wide figure."})
    return [optree, mlfm]


PROVENANCE = {"command": "collsim reproduce all --out report", "jobs": 1, "sizes": ["4MiB", "32KiB"],
              "assumption": "MB read as MiB where the paper does not say"}
ENV = {"collsim": "0.1.0", "git commit": NOT_A_CHECKOUT, "Python": "3.11", "numpy": "2", "matplotlib": "3"}
# Summary, discrepancies, 2 comparison tables, 2 data tables, software, parameters.
EXPECTED_TABLES = {"summary": "Papers reproduced", "summary-models": "Agreement per model",
                   "discrepancy-table": "All discrepancies (2 rows): the 2 printed numbers no model reproduces",
                   "optree-comparison": "optree: comparison (3 printed numbers in 3 rows: 1 agree, 1 differ, "
                                        "1 not compared)",
                   "optree-data-fig4.csv": "optree: data table fig4.csv (3 rows)",
                   "mlfm-comparison": "mlfm: comparison (1 printed number in 1 row: 0 agree, 1 differ, "
                                      "0 not compared)",
                   "mlfm-data-fig7.csv": "mlfm: data table fig7.csv (60 rows; the box scrolls)",
                   "provenance-software": "Software", "provenance-parameters": "Parameters and assumptions"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("html-report")
    return write_report(_results(root), root / "report.html", provenance=PROVENANCE)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):  # walk every chunk, checking its CRC: a truncated image fails here
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body)
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    assert zlib.decompress(idat)
    return struct.unpack(">II", data[16:24])


# --- structure, without a browser -------------------------------------------------------------


def test_every_table_has_its_caption_and_rows(report):
    page = _parse(report.read_text(encoding="utf-8"))
    by_id = {t["id"]: t for t in page.tables}
    assert len(page.tables) == len(EXPECTED_TABLES)
    for table_id, caption in EXPECTED_TABLES.items():
        assert by_id[table_id]["caption"].startswith(caption), (table_id, by_id[table_id]["caption"])
    assert by_id["optree-data-fig4.csv"]["rows"] == 3 and by_id["mlfm-data-fig7.csv"]["rows"] == 60
    assert by_id["discrepancy-table"]["rows"] == 2 and by_id["optree-comparison"]["rows"] == 3


def test_figures_are_embedded_pngs_that_decode(report):
    page = _parse(report.read_text(encoding="utf-8"))
    assert len(page.images) == 4
    for img in page.images:
        assert img["src"].startswith("data:image/png;base64,")
        w, h = _png_size(base64.b64decode(img["src"].split(",", 1)[1], validate=True))
        assert (int(img["width"]), int(img["height"])) == (w, h) and w > 0 and h > 0
        assert img["alt"]
    text = " ".join(page.text)
    assert "Figure 1 (optree/fig4)." in text and "Figure 3 (mlfm/fig7)." in text
    assert "Optimal depth against N (eq3 model)." in text


def test_discrepancies_notes_and_provenance_are_all_there(report):
    text = report.read_text(encoding="utf-8")
    page = _parse(text)
    plain = " ".join(page.text)
    assert "the printed 128 is <inconsistent> with ⌈N²/(8w)⌉ & its own formula" in plain  # escaped, not markup
    assert "<inconsistent>" not in text and "&lt;inconsistent&gt;" in text
    assert "no explanation given" in plain  # the mlfm disagreement has none: shown, not hidden
    for note in ("w = 64 wavelengths per fiber", "block size d = 4 MiB (2^20 bytes)", "radix 36"):
        assert note in plain
    for key, value in PROVENANCE.items():
        assert key in plain and (value if isinstance(value, str) else "") in plain
    assert '["4MiB", "32KiB"]' in plain
    env = environment()
    for key in ("collsim", "git commit", "Python", "numpy", "matplotlib"):
        assert key in plain and env[key] in plain


def test_no_external_references(report):
    text = report.read_text(encoding="utf-8")
    page = _parse(text)
    bad = [r for r in page.resource_refs if not (r[2].startswith("#") or r[2].startswith("data:image/"))]
    assert not bad
    assert "url(" not in page.css and "@import" not in page.css and "<script" not in text and "<link" not in text
    # URLs appear only as plain text (the citation's DOI), never where a browser would fetch them.
    assert "https://doi.org/10.0000/example" in " ".join(page.text)
    assert all("http" not in v for _, _, v in page.resource_refs)
    assert "default-src &#x27;none&#x27;" in text  # the Content-Security-Policy


def test_bytes_are_deterministic(tmp_path):
    results = _results(tmp_path)
    one = write_report(results, tmp_path / "a.html", provenance=PROVENANCE).read_bytes()
    two = write_report(results, tmp_path / "b.html", provenance=dict(PROVENANCE)).read_bytes()
    assert one == two
    assert render_report(results, provenance=PROVENANCE, env=ENV) == render_report(results, provenance=PROVENANCE,
                                                                                   env=dict(ENV))


def test_no_disagreement_and_no_parameters(tmp_path):
    r = PaperResult("textbook", "[Textbook]", tmp_path,
                    comparisons=(Comparison("eq. 1", "ring steps", "steps", 7, 7, "schedule"),))
    page = _parse(render_report([r], provenance={}, env=ENV))
    assert [t["id"] for t in page.tables] == ["summary", "summary-models", "textbook-comparison",
                                              "provenance-software"]
    assert "None: every value the papers print agrees" in " ".join(page.text)


def test_counts_are_distinct_printed_numbers_per_model(tmp_path):
    """One printed number compared under two models and at two sizes counts once, per model; formulas apart."""
    from collsim.experiments.report.paperout import TableTarget
    rows = (Comparison("§3", "ratio, 16 MiB", "x", 2.2, 2.19, "sim A", claim="the 2.2x"),
            Comparison("§3", "ratio, 64 MiB", "x", 2.2, 2.21, "sim A", claim="the 2.2x"),
            Comparison("§3", "ratio, 16 MiB", "x", 2.2, 2.5, "sim B", "other routing", claim="the 2.2x"),
            Comparison("T1", "steps", "steps", 128, 2048, "eq3", "misprint"),
            Comparison("ch. 4", "ring: (t_s + t_w m)(p-1)", "us", 10.0, 10.0, "sim A", source="formula"))
    r = PaperResult("mlfm", "[MLFM16]", tmp_path, comparisons=rows,
                    targets=(TableTarget("mlfm-congestion", "§2", "749 admitted, 203 congestion-free", "t.csv"),))
    page = _parse(render_report([r], provenance={}, env=ENV))
    text = " ".join(" ".join(page.text).split())
    assert "2 distinct numbers printed in the papers are compared (in 5 rows" in text
    assert "1 are reproduced by at least one of collsim's models" in text
    assert "1 by none" in text and "1 formulas the papers print" in text
    assert "computed by collsim from the paper's formula" in text  # the formula row is labelled, not "printed"
    by_id = {t["id"]: t for t in page.tables}
    assert by_id["summary-models"]["rows"] == 4  # sim A and sim B and eq3 over printed numbers, sim A over formulas
    # the 2.2x is reproduced by sim A: its sim B row is listed apart from the misprint no model reproduces
    assert by_id["discrepancy-table"]["rows"] == 1 and by_id["discrepancy-other"]["rows"] == 1
    assert by_id["targets"]["rows"] == 1 and "749 admitted, 203 congestion-free" in text


def test_paths_are_relative_to_the_report(tmp_path):
    """Two runs into different folders give byte-identical reports (issue 24: no absolute path in the page)."""
    from collsim.experiments.papers.reproduce import reproduce_all
    from collsim.experiments.sweep.store import Store
    pages = []
    for name in ("one", "elsewhere/two"):
        out = tmp_path / name
        out.mkdir(parents=True)
        store = Store(out / "results.sqlite")
        try:
            _, report = reproduce_all(out, papers=["mlfm"], store=store, quick=True)
        finally:
            store.close()
        pages.append(report.read_bytes())
        assert str(tmp_path).encode() not in pages[-1]
    assert pages[0] == pages[1]
    text = pages[0].decode()
    assert "<code>mlfm</code>" in text and "results.sqlite" in text


def test_a_missing_figure_or_table_is_an_error(tmp_path):
    from collsim.core.errors import InputError
    with pytest.raises(InputError, match="fig9"):
        render_report([PaperResult("x", "t", tmp_path, figures=("fig9",))], provenance={}, env=ENV)
    with pytest.raises(InputError, match="data.csv"):
        render_report([PaperResult("x", "t", tmp_path, tables=("data.csv",))], provenance={}, env=ENV)


def test_git_commit_is_read_or_reported_absent(tmp_path):
    assert environment(tmp_path)["git commit"] == NOT_A_CHECKOUT
    src = Path(__file__).resolve().parents[1] / "src" / "collsim"
    commit = environment(src)["git commit"]
    if (src.parents[1] / ".git").exists() and shutil.which("git"):
        assert len(commit.split()[0]) == 40 and int(commit.split()[0], 16) >= 0
    else:
        assert commit == NOT_A_CHECKOUT


# --- in a real browser --------------------------------------------------------------------------


def _unavailable() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install '.[test]')"
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        return f"{' and '.join(missing)} missing (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but the browser test cannot run: {reason}")
        pytest.skip(f"no headless browser: {reason}; with CI set this fails")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="collsim-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1366,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _load(driver, path: Path) -> dict:
    """Open ``path``; what the page did: console messages, images, tables and resource requests."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    state = driver.execute_script("""
        const imgs = Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight,
                                                             i.currentSrc.slice(0, 22)]);
        const tables = Array.from(document.querySelectorAll('table')).map(
            t => [t.id, t.caption ? t.caption.textContent : null, t.tBodies[0] ? t.tBodies[0].rows.length : 0]);
        const res = performance.getEntriesByType('resource').map(e => e.name);
        return {ready: document.readyState, imgs: imgs, tables: tables, resources: res,
                width: document.documentElement.scrollWidth, viewport: window.innerWidth};
    """)
    state["console"] = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    return state


def test_the_report_renders_in_a_browser(browser, report):
    state = _load(browser, report)
    assert state["ready"] == "complete"
    assert state["console"] == []
    assert len(state["imgs"]) == 4
    for complete, width, height, src in state["imgs"]:
        assert complete and width > 0 and height > 0 and src.startswith("data:image/png")
    tables = {t[0]: t for t in state["tables"]}
    assert len(state["tables"]) == len(EXPECTED_TABLES)
    for table_id, caption in EXPECTED_TABLES.items():
        assert tables[table_id][1].startswith(caption)
    assert tables["mlfm-data-fig7.csv"][2] == 60
    assert all(r.startswith(("data:", "file:")) for r in state["resources"]), state["resources"]
    assert state["width"] <= state["viewport"]  # nothing forces sideways scrolling of the page


def test_a_wide_figure_can_be_shown_at_full_size(browser, report):
    """A figure wider than the text column is shrunk to fit; its check box shows it at full size."""
    from selenium.webdriver.common.by import By
    _load(browser, report)
    size = "const i = document.querySelector('#mlfm-fig-fig8 img'); return [i.clientWidth, i.naturalWidth];"
    shown, natural = browser.execute_script(size)
    assert natural > 1500 and 0 < shown < natural
    browser.find_element(By.CSS_SELECTOR, "label[for='mlfm-fig-fig8-zoom']").click()
    assert browser.execute_script(size)[0] == natural
    assert browser.execute_script("return document.querySelectorAll('input.zoom').length") == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_browser_probes_see_an_external_request(browser, tmp_path):
    """Negative control: the same probes flag an image from the network (a local port nothing listens on)."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head><body>'
                    f'<img src="http://127.0.0.1:{_closed_port()}/x.png" alt="x"></body></html>', encoding="utf-8")
    state = _load(browser, page)
    assert state["imgs"][0][1] == 0
    assert state["console"] and any(r.startswith("http://127.0.0.1") for r in state["resources"])


def test_the_reports_content_security_policy_blocks_requests(browser, report, tmp_path):
    """A request slipped into the report is refused by its Content-Security-Policy, and the probes say so."""
    page = tmp_path / "tampered.html"
    page.write_text(report.read_text(encoding="utf-8").replace(
        "<main>", f'<main><img src="http://127.0.0.1:{_closed_port()}/x.png" alt="x">', 1), encoding="utf-8")
    state = _load(browser, page)
    assert any("Content Security Policy" in e["message"] for e in state["console"]), state["console"]
    assert [r for r in state["resources"] if not r.startswith(("data:", "file:"))]
