"""`python -m fusejit`: the command-line interface."""

from .cli import main

raise SystemExit(main())
