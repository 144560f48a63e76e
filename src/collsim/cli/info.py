"""``collsim systems`` and ``collsim algorithms NAME``: what the library offers, read from the code.

Parameters and defaults come from the systems' dataclass fields (and their
``from_options`` signatures) and from the algorithm builders' signatures; the
one-line descriptions from their numpydoc docstrings; citations from
:mod:`collsim.algorithms.bibliography`.  Nothing here is a hand-written copy.

Loading this module imports neither rich nor the library; the commands import
them when they run (tests/test_startup.py).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from typing import Any

import click

from .output import Output, TableColumn, echo, emit, emit_json, output_options, print_table
from .options import StrictCommand

# ----------------------------------------------------------------------------------- docstrings

_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.MULTILINE)


def _param_docs(obj: Any) -> dict[str, tuple[str, str]]:
    """``name -> (type, description)`` from the numpydoc ``Parameters`` section of ``obj``'s docstring."""
    doc = inspect.getdoc(obj) or ""
    m = re.search(r"^Parameters\n-{3,}\n", doc, re.MULTILINE)
    if not m:
        return {}
    body = doc[m.end():]
    nxt = _SECTION.search(body)
    body = body[:nxt.start()] if nxt else body
    out: dict[str, tuple[str, str]] = {}
    names: list[str] = []
    kind = ""
    text: list[str] = []

    def flush() -> None:
        for n in names:
            out.setdefault(n, (kind, " ".join(text)))
    for line in body.splitlines():
        if line and not line[0].isspace():
            flush()
            head, _, kind = line.partition(" : ")
            names = [n.strip().lstrip("*") for n in head.split(",") if n.strip()]
            kind, text = kind.strip(), []
        elif line.strip():
            text.append(line.strip())
    flush()
    return out


def _first_sentence(text: str) -> str:
    """The first sentence of a description (a full stop outside parentheses), markup removed."""
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r":\w+:`~?([^`]*)`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if ch == "." and depth <= 0 and (i + 1 == len(text) or text[i + 1] == " ") and not text[:i].endswith(
                (" e.g", " i.e", " cf", " eq", " ed", " no", " vs", " al")):
            return text[:i]
    return text.rstrip(".")


def _summary(obj: Any) -> str:
    return _first_sentence((inspect.getdoc(obj) or "").split("\n\n", 1)[0].replace("\n", " "))


def _kind_docs(cls: type) -> dict[str, tuple[str, str]]:
    """Parameter docs of a system kind: its class and base classes, then its ``from_options``."""
    docs: dict[str, tuple[str, str]] = {}
    for klass in cls.__mro__:
        for name, (kind, text) in _param_docs(klass).items():
            if text.startswith("As for") or not text:
                continue
            docs.setdefault(name, (kind, text))
    build = getattr(cls, "from_options", None)
    for name, (kind, text) in (_param_docs(build).items() if build else ()):
        docs.setdefault(name, (kind, text))
    return docs


def _shown(value: Any, sep: str = ",") -> str:
    """A default as a user writes it on the command line (``sep`` between a tuple's items; a table
    gives ``", "`` so that a long one wraps between items)."""
    if value is dataclasses.MISSING:
        return "required"
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else str(value)
    if isinstance(value, (tuple, list)):
        return sep.join(_shown(v) for v in value) or "-"
    return str(value)


def _json_value(value: Any) -> Any:
    if value is dataclasses.MISSING:
        return None
    if isinstance(value, tuple):
        return list(value)
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    return value


# -------------------------------------------------------------------------------------- systems

def system_entries() -> list[dict[str, Any]]:
    """Every preset and kind with its parameters: name, default, type and description.

    A kind's defaults are the values of the system its name alone builds
    (``--system KIND``), so fields that the kind derives (``nodes`` of a torus from
    its ``dims``) show what they come to; parameters that are not fields (``ndim``,
    ``radix``) show their ``from_options`` default.  A preset shows its own values.
    """
    from ..core.system import system_kind
    from ..systems import PRESETS, kind_names, kind_parameters, load_system, preset_description

    entries = []
    for name in [*PRESETS, *kind_names()]:
        preset = name in PRESETS
        cls = system_kind(preset_description(name)["kind"] if preset else name)
        params = kind_parameters(cls)
        try:
            built = load_system(name)
        except Exception:  # noqa: BLE001 - a kind that needs input (custom): the signature's defaults
            built = None
        docs = _kind_docs(cls)
        fields = {f.name for f in dataclasses.fields(cls)}
        rows = []
        for pname, default in params.items():
            value = getattr(built, pname) if built is not None and pname in fields else default
            kind, text = docs.get(pname, ("", ""))
            rows.append({"name": pname, "default": value, "type": kind, "description": _first_sentence(text)})
        what = (f"the {name!r} preset of {cls.topology}: " if preset else "") + _summary(cls)
        entries.append({"name": name, "kind": cls.topology, "preset": preset, "description": what, "parameters": rows})
    return entries


def _find(name: str, names: list[str], what: str) -> str:
    from ..core.errors import UnknownNameError, did_you_mean
    key = name.strip().lower()
    if key in names:
        return key
    hint = did_you_mean(name, names)
    raise UnknownNameError(f"unknown {what} {name!r}" + (f"{hint} Known" if hint else "; known") + f": {', '.join(names)}")


@click.command("systems", cls=StrictCommand)
@click.argument("name", required=False)
@output_options()
def systems_cmd(name: str | None, out: Output) -> None:
    """List system presets and kinds with their parameters and defaults.

    With NAME (a preset or kind, any case), show only that one.  Any of these
    names works as --system; so does a TOML file with a [system] table whose
    kind is one of the kinds and whose keys are its parameters.

    \b
    Examples:
      collsim systems
      collsim systems torus
      collsim systems paper --json
    """
    entries = system_entries()
    if name is not None:
        key = _find(name, [e["name"] for e in entries], "system")
        entries = [e for e in entries if e["name"] == key]
    if out.format == "json":
        emit_json([{**e, "parameters": [{**p, "default": _json_value(p["default"])} for p in e["parameters"]]}
                   for e in entries])
        return
    flat = [{"system": e["name"], "kind": e["kind"], "preset": e["preset"], "parameter": p["name"],
             "default": _shown(p["default"]), "type": p["type"], "description": p["description"]}
            for e in entries for p in e["parameters"]]

    def table() -> None:
        for i, e in enumerate(entries):
            if i:
                echo()
            print_table(f"{e['name']}: {e['description']}", [
                TableColumn("parameter", [p["name"] for p in e["parameters"]], left=True),
                TableColumn("default", [_shown(p["default"], ", ") for p in e["parameters"]], left=True, wrap=True),
                TableColumn("type", [p["type"] for p in e["parameters"]], left=True, drop=1),
                TableColumn("description", [p["description"] for p in e["parameters"]], left=True, wrap=True,
                            ratio=1)])
        if name is None:
            echo()
            from .tables import text_width, wrap_text
            echo(wrap_text("Use any name above as --system NAME (any case), override parameters with -S key=value, "
                           "or write a TOML file with a [system] table (kind = ... and these keys).", text_width()))
    emit(out, flat, table)


# ----------------------------------------------------------------------------------- algorithms

def algorithm_entry(name: str) -> dict[str, Any]:
    """One registered algorithm: scope, parameters (defaults from the builder's signature) and citations."""
    from ..algorithms import get_algorithm
    spec = get_algorithm(name)
    docs = _param_docs(spec.builder)
    params = [{"name": p, "default": d, "description": _first_sentence(docs.get(p, ("", ""))[1])}
              for p, d in spec.parameters().items()]
    return {"name": spec.name, "aliases": list(spec.aliases), "summary": spec.summary,
            "collectives": list(spec.collectives), "systems": list(spec.systems),
            "constraints": spec.constraints or None, "parameters": params, "reference": spec.reference,
            "citations": [c.to_json() for c in spec.citations]}


def show_algorithm(name: str, out: Output) -> None:
    """Print ``collsim algorithms NAME``: one algorithm in the chosen format."""
    e = algorithm_entry(name)
    if out.format == "json":
        emit_json(e)
        return
    flat = [{"algorithm": e["name"], "parameter": p["name"], "default": _json_value(p["default"]),
             "description": p["description"]} for p in e["parameters"]]

    def table() -> None:
        from .tables import text_width, wrap_text
        echo(wrap_text(f"{e['name']}" + (f" (also: {', '.join(e['aliases'])})" if e["aliases"] else "")
                       + f": {e['summary']}", text_width()))
        echo(f"  collectives: {', '.join(e['collectives'])}")
        echo(f"  systems:     {', '.join(e['systems'])}")
        echo(f"  constraints: {e['constraints'] or 'none'}")
        if e["parameters"]:
            echo()
            print_table("parameters (-p key=value)", [
                TableColumn("parameter", [p["name"] for p in e["parameters"]], left=True),
                TableColumn("default", [_shown(p["default"], ", ") for p in e["parameters"]], left=True, wrap=True),
                TableColumn("description", [p["description"] for p in e["parameters"]], left=True, wrap=True,
                            ratio=1)])
        else:
            echo("  parameters:  none")
        echo()
        echo(wrap_text(f"reference: {e['reference']}", text_width()))
        print_references(e["reference"])
    emit(out, flat, table)


def print_references(*texts: str) -> None:
    """Print the full citation of every ``[Key]`` cited in ``texts`` (authors, title, venue, year)."""
    from ..algorithms.bibliography import citations
    from .tables import text_width, wrap_text
    cited = {c.key: c for text in texts for c in citations(text)}
    width = text_width() - 4  # indented by 2, continued by 4; words whole
    for c in cited.values():
        first, *rest = wrap_text(f"[{c.key}] {c.text()}", width).split("\n")
        echo(f"  {first}")
        for line in rest:
            echo(f"    {line}")


__all__ = ["algorithm_entry", "print_references", "show_algorithm", "system_entries", "systems_cmd"]
