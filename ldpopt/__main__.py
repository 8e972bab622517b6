"""``python -m ldpopt``: the ``ldpopt`` command (as ``python -m ldpopt.cli``)."""

from .cli import main

raise SystemExit(main())
