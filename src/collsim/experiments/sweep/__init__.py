"""Sweeps: grids of points, each built, verified and timed once, into a results store."""
