"""``ldpopt multi``: collect marginals of many attributes under LDP, make them consistent, and
reconstruct marginals that were not collected (:mod:`ldpopt.multi`, docs/multi.md).

Notes: docs/notes/cli.md, "ldpopt.cli.multi"."""

from __future__ import annotations

import io
import json
import sys

import numpy as np

from ._args import InputError, int_arg, positive_number
from ._commands import help_of

__all__ = ["add_parser", "read_tuples"]

PROTOCOLS = ("calm", "spl", "smp", "rsfd")
POSTS = ("weighted", "calm", "linear", "none")


def _unique_header(data: bytes, path, arg: str) -> None:
    """Refuse a CSV header that names a column twice (pandas would rename the second ``A.1`` and
    collect it as an attribute of its own)."""
    import csv

    first = data.split(b"\n", 1)[0].decode("utf-8", errors="replace").lstrip("\ufeff")
    names = [c.strip() for c in next(csv.reader([first]), [])]
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise InputError(f"{arg}: {path} names the column {twice[0]!r} {names.count(twice[0])} times; give each "
                         f"attribute one column")


def read_tuples(path, arg: str = "--tuples"):
    """The table of ``path`` → (MultiDataset, per-attribute labels)."""
    import pandas as pd

    from ..multi import MultiDataset
    from ._io import input_file, text_bytes

    path = input_file(path, arg)
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            raw = pd.read_parquet(path)
        else:
            text = text_bytes(path, arg)
            _unique_header(text, path, arg)
            raw = pd.read_csv(io.BytesIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - pandas / pyarrow raise several types for a bad file
        raise InputError(f"{arg}: cannot read {path}: {_first_line(exc)}") from None
    raw = raw.astype(str)
    names = [c for c in raw.columns if c.strip().lower() != "count"]
    if len(names) < 2 or raw.shape[0] == 0:
        raise InputError(f"{arg}: {path} needs at least 2 attribute columns and one row, got columns "
                         f"{list(raw.columns)} and {raw.shape[0]} rows")
    if len(names) < raw.shape[1]:
        col = raw[next(c for c in raw.columns if c not in names)]
        counts = pd.to_numeric(col, errors="coerce")
        bad = np.flatnonzero(~np.isfinite(counts.to_numpy(dtype=float)) | (counts.to_numpy(dtype=float) < 0)
                             | (counts.to_numpy(dtype=float) % 1 != 0))
        if bad.size:
            raise InputError(f"{arg}: column 'count' row {int(bad[0]) + 1} is {col.iloc[bad[0]]!r}, not a whole "
                             "number >= 0")
        counts = counts.to_numpy().astype(np.int64)
    else:
        counts = np.ones(raw.shape[0], dtype=np.int64)
    codes, labels = [], []
    for c in names:
        vals = raw[c].str.strip()
        uniq = vals.unique()
        try:
            uniq = sorted(uniq, key=int)
        except ValueError:
            uniq = sorted(uniq)
        if len(uniq) < 2:
            raise InputError(f"{arg}: column {c!r} takes a single value ({uniq[0]!r}); an attribute needs at least 2")
        codes.append(pd.Categorical(vals, categories=uniq).codes.astype(np.int64))
        labels.append(list(uniq))
    data = MultiDataset.from_tuples(np.stack(codes, axis=1), counts, tuple(len(u) for u in labels),
                                    names=tuple(names), source=str(path))
    return data, labels


def _first_line(exc) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _attrs(text: str, names, arg: str) -> list[tuple[int, ...]]:
    """``A,B;B,C`` (attribute names) → attribute-index tuples."""
    out = []
    for part in text.split(";"):
        got = [x.strip() for x in part.split(",") if x.strip()]
        unknown = [x for x in got if x not in names]
        if not got or unknown:
            raise InputError(f"{arg}: {part!r} must name attributes among {list(names)}"
                             + (f" ({unknown[0]!r} is not one)" if unknown else ""))
        if len(set(got)) != len(got):
            raise InputError(f"{arg}: {part!r} names an attribute twice")
        out.append(tuple(sorted(names.index(x) for x in got)))
    return out


def _protocol(args, data, collect):
    from .. import multi

    eps = args.epsilon
    try:
        if args.protocol == "calm":
            if collect is None and not 1 <= args.way <= data.k:
                raise InputError(f"--way must be in [1, {data.k}] (the file has {data.k} attributes), got {args.way}")
            return multi.calm(data.domains, eps, way=args.way, attrs=collect, oracle=args.oracle)
        if args.oracle not in ("grr", "oue") and args.protocol == "rsfd":
            raise InputError(f"--oracle: RS+FD's inner oracle must be grr or oue, got {args.oracle}")
        return {"spl": multi.spl, "smp": multi.smp, "rsfd": multi.rsfd}[args.protocol](data.domains, eps, args.oracle)
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"--protocol {args.protocol}: {exc}") from None


def _rows(out, data, labels, attrs, parts, raw, source):
    for a, x, r in zip(attrs, parts, raw):
        shape = tuple(data.domains[j] for j in a)
        idx = np.unravel_index(np.arange(x.size), shape)
        out["marginal"] += ["|".join(data.names[j] for j in a)] * x.size
        out["cell"] += ["|".join(str(labels[j][i[c]]) for j, i in zip(a, idx)) for c in range(x.size)]
        out["source"] += [source] * x.size
        out["f_tilde"] += list(r if r is not None else np.full(x.size, np.nan))
        out["f"] += list(x)


def _add_cells(cols, est, f, args) -> None:
    """``--ci LEVEL``: the released marginal cells' table (:func:`ldpopt.multi.marginal_cells`) as the
    columns se, ci_low, ci_high, correction_sigma, flagged of the collected rows (NaN / 0 on the
    reconstructed ones): exact for ``--post linear``, the bootstrap through each marginal's sampler
    (``--resamples``, seeded by ``--seed``) hulled with the linear release's exact interval otherwise."""
    from .. import multi

    def release(e, kind=args.post):
        return multi.consistency_problem(e, "weighted").solve().f if kind == "weighted" else e.f_tilde

    post = args.post if args.post in ("linear", "calm") else release
    try:
        tab = multi.marginal_cells(est, post, args.ci, n_resamples=args.resamples, rng=args.seed)
    except ValueError as exc:
        raise InputError(f"--ci: {exc}") from None
    m = len(tab)
    if not np.allclose(tab["estimate"].to_numpy(), f, rtol=0, atol=1e-9):
        raise RuntimeError("--ci: the cell table's estimate is not the released f")  # one mechanism, checked
    for col in ("se", "ci_low", "ci_high", "correction_sigma"):
        cols[col] = np.r_[tab[col].to_numpy(), np.full(cols["f"].size - m, np.nan)]
    cols["flagged"] = np.r_[tab["flagged"].to_numpy().astype(np.int64), np.zeros(cols["f"].size - m, np.int64)]
    k = int(tab["flagged"].sum())
    print(f"corrections flagged (|released - raw| > max(7 sigma, one count); flagged = 1): {k} of {m}",
          file=sys.stderr)


def _run(args) -> int:
    from .. import __version__, multi
    from ._io import as_json, csv_text, format_of, out_files, output_target, write_table
    from ._paths import refuse_collisions

    fmt = format_of(args.out, args.format)
    if args.out:
        output_target(args.out, "--out")  # a folder, a missing folder: refused before the work
    refuse_collisions(out_files(args.out, fmt), [("--tuples", args.tuples)])
    data, labels = read_tuples(args.tuples)
    collect = _attrs(args.marginals, list(data.names), "--marginals") if args.marginals is not None else None
    wanted = _attrs(args.reconstruct, list(data.names), "--reconstruct") if args.reconstruct is not None else []
    if wanted and args.post == "none":
        raise InputError("--reconstruct needs consistent marginals: give --post weighted or --post calm")
    if collect is not None and args.protocol != "calm":
        raise InputError(f"--marginals is for --protocol calm (--protocol {args.protocol} collects the 1-way marginals)")
    proto = _protocol(args, data, collect)
    est = proto.simulate(data, args.seed, exact=args.exact)
    status = "unchecked"
    if args.post == "weighted":
        sol = multi.consistency_problem(est, "weighted").solve()
        f, status = sol.f, sol.status
    elif args.post == "calm":
        f = multi.calm_consistency(est).f
    elif args.post == "linear":
        try:
            f = multi.linear_consistency(est)
        except ValueError as exc:
            raise InputError(f"--post linear: {exc}") from None
    else:
        f = est.f_tilde
    ms = est.marginals
    out: dict[str, list] = {"marginal": [], "cell": [], "source": [], "f_tilde": [], "f": []}
    _rows(out, data, labels, ms.attrs, ms.split(f), ms.split(est.f_tilde), "collected")
    if wanted:
        try:
            table = multi.maxent(ms, f, consistency_tol=1e-6)
        except ValueError as exc:
            raise InputError(f"--reconstruct: {exc}") from None
        _rows(out, data, labels, wanted, table.marginals(wanted), [None] * len(wanted), "reconstructed")
    cols = {k: np.asarray(v, dtype=np.float64 if k.startswith("f") else object) for k, v in out.items()}
    if args.ci is not None:
        _add_cells(cols, est, f, args)
    from ..privacy.statement import PrivacyStatement, local
    from ._recorded import input_digests

    # each user sends one report of the whole tuple: the statement is the protocol's exact ε of that
    # report (above the nominal ε for RSFD), not the nominal budget
    privacy = PrivacyStatement.from_dict({**local(est.exact_epsilon), "composition": "one report of the whole tuple"})
    metadata = {"ldpopt_version": __version__, "protocol": est.protocol, "oracle": args.oracle,
                "epsilon": est.epsilon, "exact_epsilon": est.exact_epsilon, "privacy": privacy.as_dict(), "n": est.n,
                "attributes": list(data.names), "domains": list(data.domains),
                "marginals": [list(a) for a in ms.attrs], "post": args.post, "status": status,
                "ci": None if args.ci is None else {"level": args.ci, "resamples": args.resamples, "seed": args.seed},
                "reconstructed": [list(a) for a in wanted], "seed": args.seed, "exact": args.exact,
                "tuples_file": str(args.tuples), "sha256": input_digests(args, {"tuples": args.tuples})}
    written = write_table(cols, args.out, fmt, metadata) if args.out else []
    if args.json:
        json.dump({"metadata": metadata, "out": str(args.out) if args.out else None, **as_json(cols)}, sys.stdout,
                  default=str)
        sys.stdout.write("\n")
    elif not args.out:
        sys.stdout.write(csv_text(cols))
    else:
        print(f"ldpopt multi: privacy: {privacy}", file=sys.stderr)
        print(f"wrote {len(out['f'])} cells of {ms.m + len(wanted)} marginals (post {args.post}: {status}) to "
              f"{', '.join(map(str, written))}", file=sys.stderr)
    return 0 if status in ("optimal", "unchecked") else 1


def _level(text) -> float:
    from .postprocess import _level as level

    return level(text)


def add_parser(sub) -> None:
    from .postprocess import FORMATS

    mp = sub.add_parser("multi", help=help_of("multi"), description=__doc__.split("\n\n")[0])
    mp.add_argument("--tuples", required=True, help="CSV/Parquet: one column per attribute (+ optional count)")
    mp.add_argument("--protocol", choices=PROTOCOLS, default="calm",
                    help="calm: each user one k-way marginal (default); spl / smp / rsfd: the 1-way marginals")
    mp.add_argument("--way", type=int_arg(1), default=2, help="calm: collect every WAY-attribute marginal (default 2)")
    mp.add_argument("--marginals", default=None, help="calm: collect these instead, e.g. 'A,B;B,C'")
    mp.add_argument("--oracle", default="oue", help="frequency oracle inside the protocol (default oue)")
    mp.add_argument("--epsilon", type=positive_number, required=True, help="each user's budget")
    mp.add_argument("--post", choices=POSTS, default="weighted",
                    help="consistency step (default weighted; linear: the weighted projection without "
                         "non-negativity, whose --ci is exact)")
    mp.add_argument("--ci", type=_level, default=None, metavar="LEVEL",
                    help="add se, ci_low, ci_high, correction_sigma and flagged columns for the collected cells: "
                         "a LEVEL confidence interval (e.g. 0.95), exact for --post linear, bootstrapped through "
                         "each marginal's oracle otherwise (calm, smp; not spl or rsfd)")
    mp.add_argument("--resamples", type=int_arg(10), default=200, help="bootstrap resamples for --ci (default 200)")
    mp.add_argument("--reconstruct", default=None, help="marginals to answer by maximum entropy, e.g. 'A,B,C;B,C,D'")
    mp.add_argument("--seed", type=int_arg(0), default=0, help="seed of the simulated collection (default 0)")
    mp.add_argument("--exact", action="store_true", help="run the real clients instead of the fast path")
    mp.add_argument("--out", default=None, help="output file (.csv, .parquet or .json); stdout if omitted")
    mp.add_argument("--format", choices=FORMATS, default=None, help="output format (default: from --out's suffix)")
    mp.add_argument("--json", action="store_true", help="print a JSON document (cells and metadata) to stdout")
    mp.set_defaults(func=_run)
