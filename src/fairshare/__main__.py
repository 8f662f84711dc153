"""``python -m fairshare`` runs the command line."""

from fairshare.cli import main

main()
