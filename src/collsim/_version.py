"""collsim's version: a literal, kept equal to pyproject.toml's by tests/test_startup.py, importing nothing."""

__version__ = "0.1.0"
