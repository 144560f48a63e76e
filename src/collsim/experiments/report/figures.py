"""Figures and stored results of a reproduction: written atomically, redrawn only when their data change.

:func:`save_figure` writes a figure's PNG and SVG byte-reproducibly; :func:`cached_figure`
redraws a figure only when the digest of its data (:func:`figure_digest`) changed since the
files were written; :func:`stored` reads a computed result back from the results store.

Examples
--------
>>> figure_digest("fig", 1) == figure_digest("fig", 1)
True
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable

from ...core.files import atomic_write


def save_figure(fig, out_dir: str | Path, name: str) -> tuple[Path, Path]:
    """Save a matplotlib figure as ``name.png`` and ``name.svg``, byte-identical across runs."""
    import matplotlib
    import matplotlib.pyplot as plt
    out = Path(out_dir)
    paths = []
    with matplotlib.rc_context({"svg.hashsalt": "collsim", "svg.fonttype": "none"}):
        for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, metadata=meta, dpi=120, bbox_inches="tight")
            p = out / f"{name}.{ext}"
            atomic_write(p, lambda fh, data=buf.getvalue(): fh.write(data))
            paths.append(p)
    plt.close(fig)
    return paths[0], paths[1]


def stored(store, point: dict[str, Any], compute: Callable[[], Any]) -> Any:
    """``compute()``'s JSON-able value, kept in the results store under ``point``.

    A reproduction's first run computes and stores; a second run into the same folder (``collsim
    reproduce`` keeps a store there) reads the value back.  The store keys every value by
    :data:`collsim.experiments.sweep.store.MODEL_VERSION` too, so a changed model recomputes.
    """
    rec = None if store is None else store.get(point)
    if rec is not None and rec["status"] == "ok":
        return rec["result"]["value"]
    value = compute()
    if store is not None:
        store.put(point, {"value": value})
        return json.loads(json.dumps(value))  # the first run sees what a second one reads back
    return value


def figure_digest(*parts: Any) -> str:
    """A digest of what a figure is drawn from: its data and the source of the code that draws it."""
    import hashlib
    import inspect

    import matplotlib

    from ..._version import __version__
    h = hashlib.sha256(f"collsim {__version__} matplotlib {matplotlib.__version__}\n".encode())
    for part in parts:
        if inspect.ismodule(part) or inspect.isfunction(part):
            h.update(inspect.getsource(part).encode())
        else:
            h.update(json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


def cached_figure(out_dir: str | Path, name: str, digest: str, draw: Callable[[], Any],
                  save: Callable[..., Any] | None = None) -> tuple[bool, Any]:
    """Draw and save a figure unless the folder already holds it, drawn from the same data by the same code.

    ``.{name}.figure`` in ``out_dir`` (JSON) records the digest, the SHA-256 of the PNG and SVG
    written and what ``draw`` returned besides the figure; when both files are there with those
    contents and the digest is the same, nothing is drawn (a second run into the same folder).
    The files are those :func:`save_figure` writes, byte for byte.
    """
    import hashlib
    out = Path(out_dir)
    record = out / f".{name}.figure"
    files = [out / f"{name}.png", out / f"{name}.svg"]

    def sums() -> list[str]:
        return [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    try:
        old = json.loads(record.read_text())
        if old["digest"] == digest and old["files"] == sums():
            return False, old["extra"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    got = draw()
    fig, extra = got if isinstance(got, tuple) else (got, None)
    (save or save_figure)(fig, out, name)
    text = json.dumps({"digest": digest, "files": sums(), "extra": extra}, sort_keys=True) + "\n"
    atomic_write(record, lambda fh: fh.write(text.encode()))
    return True, extra


def pyplot():
    """matplotlib's pyplot on the non-interactive Agg backend (no display needed)."""
    from ...core.errors import InputError
    try:
        import matplotlib
    except ImportError:
        raise InputError("drawing figures needs matplotlib: pip install 'collsim[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
