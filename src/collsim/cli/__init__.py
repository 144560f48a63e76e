"""Thin command-line layer: each command parses options and calls the library."""
