"""``python -m regrow`` runs the command line."""

from ._cli._main import main

raise SystemExit(main())
