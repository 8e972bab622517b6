"""``ldpopt postprocess --robust METHOD``: a recovery from poisoned reports (:mod:`ldpopt.robust`) as
one more output column, ``robust_<method>``; ``--beta`` the fake-user fraction (LDPRecover, mixture,
lift; optional for the guarded lift, which otherwise estimates it and acts only on evidence of an
attack), ``--suspects`` the suspect values (mixture; lift finds its own when it is not given): ``top:K``
(the K largest estimates) or comma-separated values of the counts file. The mixture's answer is
solved and checked by ldpopt; its status is in the metadata, and a status other than ``optimal`` is
an error (nothing is written)."""

from __future__ import annotations

from ._args import InputError

__all__ = ["add_robust_options", "robust_column"]

ROBUST = ("ldprecover", "rsn", "mixture", "lift", "guarded")


def add_robust_options(parser) -> None:
    parser.add_argument("--robust", choices=ROBUST, default=None,
                        help="add a recovery from poisoned reports as column robust_METHOD")
    parser.add_argument("--beta", type=float, default=None,
                        help="fraction of fake users in [0, 1) for --robust ldprecover / mixture / lift "
                             "(guarded: optional, estimated when absent)")
    parser.add_argument("--suspects", default=None,
                        help="suspect values for --robust mixture (and lift): top:K or comma-separated values")


def _suspects(text, table, estimate):
    import numpy as np

    from ..robust import suspects

    if text is None:
        raise InputError("--robust mixture needs --suspects (top:K or comma-separated values)")
    if text.startswith("top:"):
        try:
            k = int(text[4:])
        except ValueError:
            raise InputError(f"--suspects top:K needs an integer K, got {text!r}") from None
        try:
            return suspects(estimate.f_tilde, k)
        except ValueError as exc:
            raise InputError(f"--suspects: {exc}") from None
    labels = [str(v) for v in table.values]
    idx = []
    for s in text.split(","):
        if s.strip() not in labels:
            raise InputError(f"--suspects: value {s.strip()!r} is not in {table.path}")
        idx.append(labels.index(s.strip()))
    return np.array(idx)


def robust_column(out: dict, table, estimate, args) -> dict | None:
    """Add ``robust_<method>`` to ``out``; return the metadata entry (None without ``--robust``)."""
    if args.robust is None:
        if args.beta is not None or args.suspects is not None:
            raise InputError("--beta and --suspects only go with --robust")
        return None
    from .. import robust

    if args.robust in ("ldprecover", "mixture", "lift") and args.beta is None:
        raise InputError(f"--robust {args.robust} needs --beta (the fake-user fraction)")
    meta = {"method": args.robust, "beta": args.beta}
    try:
        if args.robust == "mixture":
            s = _suspects(args.suspects, table, estimate)
            sol = robust.recover(estimate, "mixture", beta=args.beta, suspects=s)
            meta.update(suspects=[str(table.values[i]) for i in s], status=sol.status, solver=sol.solver)
            if sol.status != "optimal":
                raise InputError(f"--robust mixture: the solve ended with status {sol.status!r} ({sol.message})")
            f = sol.f
        elif args.robust == "lift":
            s = (robust.lift_suspects(estimate, args.beta) if args.suspects is None
                 else _suspects(args.suspects, table, estimate))
            f = robust.lift(estimate, args.beta, s)
            meta.update(suspects=[str(table.values[i]) for i in s])
        elif args.robust == "guarded":  # β estimated (acting only on evidence of an attack) unless given
            if args.suspects is not None:
                raise InputError("--robust guarded finds its own suspects: drop --suspects")
            f = robust.guarded_lift(estimate, args.beta)
        elif args.robust == "ldprecover":
            f = robust.ldprecover(estimate, args.beta)
        else:
            f = robust.rsn(estimate)
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"--robust {args.robust}: {exc}") from None
    out[f"robust_{args.robust}"] = f
    return meta
