"""Tuning: the fastest verified schedule per message size, its rules and its figure."""
