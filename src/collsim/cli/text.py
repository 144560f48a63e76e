"""Text a stream can encode: ASCII names for what a non-UTF-8 terminal cannot show.

A stream that cannot encode a character gets its ASCII name (``lambda``, ``alpha-beta``,
``us``) instead of an error (docs/output.md).  Loading this module imports nothing
heavy (tests/test_startup.py).
"""

from __future__ import annotations

import codecs
import sys

import click

__all__ = ["ASCII_NAMES", "ascii_fallback", "echo", "plain"]

# What a character becomes on a stream that cannot encode it (anything else becomes "?").
ASCII_NAMES = {"λ": "lambda", "α": "alpha", "β": "beta", "µ": "u", "μ": "u", "–": "-", "—": "-", "−": "-",
               "…": "...", "≤": "<=", "≥": ">=", "×": "x", "·": "*", "→": "->", "²": "^2", "⌈": "ceil(",
               "⌉": ")", "⌊": "floor(", "⌋": ")", "━": "-", "─": "-", "│": "|", "†": "+"}


def _ascii_names(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "".join(ASCII_NAMES.get(c, "?") for c in exc.object[exc.start:exc.end]), exc.end


codecs.register_error("collsim-ascii", _ascii_names)


def _encoding(stream) -> str:
    return getattr(stream, "encoding", None) or "utf-8"


def plain(text: str, stream=None) -> str:
    """``text`` as ``stream`` (default stdout) can encode it: unencodable characters by ASCII name."""
    enc = _encoding(sys.stdout if stream is None else stream)
    try:
        text.encode(enc)
        return text
    except UnicodeEncodeError:
        return text.encode(enc, "collsim-ascii").decode(enc)
    except LookupError:
        return text


def echo(text: str = "", *, err: bool = False) -> None:
    """Print one line to stdout (or stderr) in a form the stream can encode."""
    click.echo(plain(text, sys.stderr if err else sys.stdout), err=err)


def ascii_fallback() -> None:
    """Make stdout and stderr print ASCII names instead of failing on characters they cannot encode."""
    for stream in (sys.stdout, sys.stderr):
        try:
            "λα–β µ…".encode(_encoding(stream))
        except UnicodeEncodeError:
            try:
                stream.reconfigure(errors="collsim-ascii")
            except (AttributeError, ValueError):  # not a TextIOWrapper: plain() still helps
                pass
        except LookupError:
            pass
