"""The conformance suites behind :mod:`ldpopt.testing`: an oracle's (:mod:`.oracles`), an objective's
and a constraint's (:mod:`.problems`). One floor under ``testing.py``, above the items they check."""
