"""What ``ldpopt verify`` prints: every row (claim, instance, metric, value, tolerance, verdict),
a per-claim summary with named metrics, and the exit code.

Details: docs/experiments.md, section `ldpopt.verify.report`.
"""

from __future__ import annotations

import json

import numpy as np

from .result import FAILS, HOLDS, NOT_REFEREED, dumps

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NOT_REFEREED = 0, 1, 2, 3
FINDING_FAILS = "does not hold"


def _expected(df):
    return df["expected"].map(lambda v: isinstance(v, (bool, np.bool_)) and bool(v))


def shown_verdicts(df):
    """The verdict printed per row: ``fails`` only where it sets exit 1, ``does not hold`` on a finding."""
    return df["verdict"].where(_expected(df) | (df["verdict"] != FAILS), FINDING_FAILS)


def failures(df):
    """Rows of claims expected to hold whose verdict is ``fails``.

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.

    Returns
    -------
    pandas.DataFrame
        Those rows (empty when every expected claim holds).

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> len(verify.failures(rows))
    0
    """
    return df[_expected(df) & (df["verdict"] == FAILS)]


def not_refereed_rows(df):
    """Rows whose referee could not decide (with ``why``).

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> len(verify.report.not_refereed_rows(rows))
    0
    """
    return df[df["verdict"] == NOT_REFEREED]


def findings(df):
    """Per finding claim (``expected`` None): whether it held in every refereed setting, some, or none.

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.

    Returns
    -------
    dict of str to str
        Claim to ``"holds"``, ``"does not hold"`` or a count of the settings where it held.

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> verify.findings(rows)["mle-apx-formula-ndss"]  # NDSS 2020 Eq. 12 as printed
    'does not hold'
    """
    fnd = df[df["expected"].isna() & (df["verdict"] != NOT_REFEREED)]
    res = {}
    for claim, g in fnd.groupby("claim", sort=False):
        k = int((g["verdict"] == HOLDS).sum())
        res[claim] = "holds" if k == len(g) else ("does not hold" if k == 0 else f"holds in {k}/{len(g)} settings")
    return res


def exit_code(df, require_referee: bool = False) -> int:
    """The exit code of ``ldpopt verify`` for these rows (docs/experiments.md).

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.
    require_referee : bool, default False
        Return :data:`EXIT_NOT_REFEREED` when nothing fails but an expected claim was not refereed.

    Returns
    -------
    int
        :data:`EXIT_OK`, :data:`EXIT_FAIL` or :data:`EXIT_NOT_REFEREED`.

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> verify.report.exit_code(rows) == verify.report.EXIT_OK
    True
    """
    if len(failures(df)):
        return EXIT_FAIL
    if require_referee and len(not_refereed_rows(df)[_expected(df)]):
        return EXIT_NOT_REFEREED
    return EXIT_OK


def _instance(r) -> str:
    return f"{r['oracle']} eps={r['epsilon']:g} n={r['n']} d={r['d']} seed={r['seed']}"


def summary(df):
    """Per claim and metric: rows, holds / fails / not refereed, the worst value against its
    tolerance (largest for ≤ checks, smallest for > / ≥), and the failing instances (all of them, "failing_settings").

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.

    Returns
    -------
    pandas.DataFrame
        One row per claim and metric.

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> first = verify.summary(rows).iloc[0]
    >>> first["claim"], int(first["rows"]), int(first["holds"])
    ('norm-sub=cls', 1, 1)
    """
    import pandas as pd

    out = []
    for (claim, metric), g in df.groupby(["claim", "metric"], sort=False):
        ref = g[g["verdict"] != NOT_REFEREED]
        worst = None
        if len(ref):
            op = ref["op"].iloc[0]
            vals = ref["value"].astype(float)
            idx = vals.idxmax() if op in ("<=", "==") else vals.idxmin()
            worst = ref.loc[idx]
        bad = g[g["verdict"] == FAILS]
        shown = shown_verdicts(g)
        out.append({"claim": claim, "kind": g["kind"].iloc[0], "expected": g["expected"].iloc[0],
                    "metric": metric, "unit": g["unit"].iloc[0], "rows": len(g),
                    "holds": int((g["verdict"] == HOLDS).sum()), "fails": int((shown == FAILS).sum()),
                    "does_not_hold": int((shown == FINDING_FAILS).sum()),
                    "not_refereed": int((g["verdict"] == NOT_REFEREED).sum()),
                    "worst_value": np.nan if worst is None else float(worst["value"]),
                    "op": g["op"].iloc[0],
                    "tolerance_at_worst": np.nan if worst is None or worst["tolerance"] is None else float(worst["tolerance"]),
                    "failing_settings": "; ".join(f"{_instance(r)} [{r['referee']}]" for _, r in bad.iterrows())})
    return pd.DataFrame(out)


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def render_text(df, require_referee: bool = False) -> str:
    """The table of every row, the summary, the findings, then failures and rows not refereed.

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.
    require_referee : bool, default False
        As in :func:`exit_code`.

    Returns
    -------
    str

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> verify.report.render_text(rows).splitlines()[0]
    'Claims checked:'
    """
    import pandas as pd

    lines = ["Claims checked:"]
    for claim, g in df.groupby("claim", sort=False):
        lines.append(f"  {claim}: {g['statement'].iloc[0]}")
    lines += ["", "Every row: claim | instance | referee | metric [unit] | value op tolerance | verdict",
              "  (fails: a claim expected to hold, exit 1; does not hold: a finding, exit unaffected)"]
    for _, r in df.assign(verdict=shown_verdicts(df)).iterrows():
        tol = _fmt(r["tolerance"])
        why = f" ({r['why']})" if r["verdict"] == NOT_REFEREED else ""
        reps = f" reps={r['reps']}" if r["reps"] == r["reps"] and r["reps"] is not None else ""
        lines.append(f"  {r['claim']} | {_instance(r)}{reps} | {r['referee']} | {r['metric']} [{r['unit']}] | "
                     f"{_fmt(float(r['value']))} {r['op']} {tol} | {r['verdict']}{why}")
    with pd.option_context("display.width", 250, "display.max_colwidth", 50, "display.max_rows", 1000):
        lines += ["", "Summary per claim and metric:",
                  summary(df).drop(columns=["failing_settings"]).to_string(index=False)]
    lines += ["", "Findings (reported either way):"]
    lines += [f"  {c}: {o}" for c, o in findings(df).items()]
    fails = failures(df)
    if len(fails):
        lines += ["", "Claims expected to hold that FAIL (every failing instance):"]
        for _, r in fails.iterrows():
            lines.append(f"  {r['claim']} [{_instance(r)}; {r['referee']}]: {r['metric']} = {r['value']!r} "
                         f"[{r['unit']}], must be {r['op']} {r['tolerance']!r} ({r['tolerance_basis']})")
    else:
        lines += ["", "Every refereed row of a claim expected to hold holds."]
    nr = not_refereed_rows(df)
    if len(nr):
        lines += ["", f"Not refereed ({len(nr)} rows; not failures" + (", exit 3 with --require-referee" if
                                                                      require_referee else "") + "):"]
        for (why, inst, ref), g in nr.groupby([nr["why"], nr.apply(_instance, axis=1), nr["referee"]], sort=False):
            lines.append(f"  {', '.join(g['claim'])} [{inst}; {ref}]: {why}")
    lines.append(f"\nexit code {exit_code(df, require_referee)}")
    return "\n".join(lines)


def render_json(df, require_referee: bool = False) -> str:
    """One JSON document; floats at full precision (shortest round-trip repr), non-finite as strings.

    Parameters
    ----------
    df : pandas.DataFrame
        The rows :func:`run` returned.
    require_referee : bool, default False
        As in :func:`exit_code`.

    Returns
    -------
    str
        JSON with ``exit_code``, ``findings``, ``failures``, ``not_refereed``, ``summary``, ``rows``.

    Examples
    --------
    >>> import json
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> sorted(json.loads(verify.report.render_json(rows)))
    ['exit_code', 'failures', 'findings', 'not_refereed', 'rows', 'summary']
    """
    rows = []
    for rec in df.assign(verdict=shown_verdicts(df)).to_dict(orient="records"):
        rec["metrics"] = json.loads(rec["metrics"])
        rows.append(rec)
    doc = {"exit_code": exit_code(df, require_referee), "findings": findings(df),
           "failures": sorted(set(failures(df)["claim"])),
           "not_refereed": sorted(set(not_refereed_rows(df)["claim"])),
           "summary": summary(df).to_dict(orient="records"), "rows": rows}
    return dumps(doc)
