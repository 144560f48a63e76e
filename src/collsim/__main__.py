"""``python -m collsim`` runs the command line (guarded: mpi4py.futures workers re-import ``__main__``)."""

from .cli.main import main

if __name__ == "__main__":
    main()
