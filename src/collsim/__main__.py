"""``python -m collsim`` runs the command line."""

from .cli.main import main

main()
