"""Other tools' formats: MSCCL algorithm XML out and in, Chrome/Perfetto trace events, SimGrid platforms.

This layer sits above :mod:`collsim.pipeline` (it builds, realises and verifies schedules) and
below the experiments and the CLI (docs/model.md, "Layers"; docs/formats.md).
"""
