"""``python -m ldpopt.cli``: the ``ldpopt`` command."""

from . import main

raise SystemExit(main())
