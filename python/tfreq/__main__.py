"""``python -m tfreq``: the tfreq command."""

from ._cli import main

main()
