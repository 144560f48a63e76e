"""``python -m collsim.mpi ...`` is ``collsim mpi ...`` (run it under mpiexec).

An entry point sits above every layer, as ``collsim/__main__.py`` does; the command line is
looked up by name so that the ``mpi`` package itself never imports the ``cli`` layer.
"""

import sys
from importlib import import_module

import_module("collsim.cli.main").main(["mpi", *sys.argv[1:]])
