"""The papers' claims checked on saved results: the claim rows' verdicts and REPRODUCTION.md's tables
(``verdicts``), the result tables they read (``table``), number formats (``format``) and the bespoke
reductions rows name (``named``, ``jia``)."""

from ..._deprecated import forward

# the names of the former module ``ldpopt.experiments.claims``, now in ``claims.verdicts``
_OLD = ("GROUPS", "REDUCTIONS", "claims", "markdown", "quick_verdict", "reproduction", "required_reps", "rows",
        "summary_markdown", "verdict")
_forward = forward(__name__, ("ldpopt.experiments.claims.verdicts",))


def __getattr__(name: str):
    if name in _OLD:
        return _forward(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
