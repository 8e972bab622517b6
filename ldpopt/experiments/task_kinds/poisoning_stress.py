"""Task kind ``poisoning-stress``: every recovery against attacks outside the lift's threat model
(:data:`ATTACKS`), each β mode (:data:`MODES`), one row per method, mode, attack, β and metric.

Notes: docs/notes/poisoning.md, section ``ldpopt.experiments.task_kinds.poisoning_stress``.
"""

from __future__ import annotations

import numpy as np

from ... import robust
from ...methods.normalize import project_simplex
from ...queries import mse
from ..registry import kind
from ..toolkit import dataset_of, params, task_oracle

__all__ = ["ATTACKS", "MODES", "RECOVERIES", "poisoning_stress", "stress_rows"]

#: β modes: the β a recovery is given, from the true β (or the told β) and the estimate
MODES = {"known": lambda b, est, o: b, "estimated": lambda b, est, o: robust.estimate_beta(est, o),
         "low": lambda b, est, o: 0.25 * b, "high": lambda b, est, o: min(4.0 * b, 0.95)}

#: recoveries: (needs β, f̂ from (estimate, β, oracle))
RECOVERIES = {"norm-sub": (False, lambda e, b, o: project_simplex(e.f_tilde)),
              "rsn": (False, lambda e, b, o: robust.rsn(e)),
              "ldprecover": (True, lambda e, b, o: robust.ldprecover(e, b)),
              "lift": (True, lambda e, b, o: robust.lift(e, b)),
              "guarded-lift": (True, lambda e, b, o: robust.guarded_lift(e, b))}


def _random_targets(r):
    return lambda o, f, rng: np.sort(rng.choice(o.d, r, replace=False))


def _popular(o, f, rng):
    return np.sort(np.argsort(-f, kind="stable")[4:14])


def _mga(o, t, m, n_total, beta, rng):
    return robust.fake_counts(o, "mga", t, m, rng)


def _split(o, t, m, n_total, beta, rng):
    return robust.profile_counts(o, t, robust.split_shape(t.size), m, rng)


def _adaptive(min_size):
    def fake(o, t, m, n_total, beta, rng):
        return robust.profile_counts(o, t, robust.evasive_shape(o, t, beta, n_total, min_size=min_size), m, rng)
    return fake


#: attack name -> (targets from (oracle, genuine f, rng), fake counts, whether fake users exist)
ATTACKS = {**{f"mga-r{k}": (_random_targets(k), _mga, True) for k in (1, 2, 3, 5, 10)},
           **{f"split-r{k}": (_random_targets(k), _split, True) for k in (2, 3, 5, 10)},
           "popular": (_popular, _mga, True),
           "adaptive": (_random_targets(10), _adaptive(5), True),
           "adaptive-m2": (_random_targets(10), _adaptive(2), True),
           "none": (_random_targets(10), None, False)}


def stress_rows(o, counts, attacks, betas, rng, methods=tuple(RECOVERIES), modes=tuple(MODES)) -> list[dict]:
    """The rows of one task (module docstring) for oracle ``o`` and the genuine histogram ``counts``.

    Parameters
    ----------
    o : FrequencyOracle
        The oracle.
    counts : array_like of int, shape (d,)
        The genuine users' histogram.
    attacks : list of str
        Names of :data:`ATTACKS`.
    betas : list of float
        True fake-user fractions, each in (0, 1).
    rng : numpy.random.Generator
        The randomness.
    methods, modes : tuple of str
        Subsets of :data:`RECOVERIES` and :data:`MODES`.

    Returns
    -------
    list of dict
    """
    bad = sorted(set(attacks) - set(ATTACKS)) + sorted(set(methods) - set(RECOVERIES)) + sorted(set(modes) - set(MODES))
    if bad:
        raise ValueError(f"attacks, methods and modes of a poisoning-stress task must be among {list(ATTACKS)}, "
                         f"{list(RECOVERIES)} and {list(MODES)}; got {bad}")
    tc = np.asarray(counts, dtype=np.int64)
    n = int(tc.sum())
    f = tc / n
    out = []
    for beta in betas:
        for attack in attacks:
            pick, fake, attacked = ATTACKS[attack]
            t = pick(o, f, rng)
            m = robust.fake_user_count(n, beta) if attacked else 0
            genuine = o.sample_counts(tc, rng)
            extra = fake(o, t, m, n + m, beta, rng) if m else 0
            est = o.estimate(genuine + extra, n + m)
            for meth in methods:
                needs, fn = RECOVERIES[meth]
                for mode in (modes if needs else ("",)):
                    b = MODES[mode](beta, est, o) if needs else None
                    fh = fn(est, b, o)
                    out += [{"method": meth, "mode": mode, "attack": attack, "beta": float(beta), "metric": "mse",
                             "value": float(mse(fh, f))},
                            {"method": meth, "mode": mode, "attack": attack, "beta": float(beta), "metric": "gain",
                             "value": float(fh[t].sum() - f[t].sum())}]
    return out


@kind("poisoning-stress", oracle_params=True)
def poisoning_stress(task) -> list[dict]:
    prm = params(task)
    ds = dataset_of(task)
    o = task_oracle(task, ds.d)
    rows = stress_rows(o, ds.counts, prm.get("attacks", list(ATTACKS)), prm.get("betas", [0.05]), task.rng(),
                       methods=tuple(task.methods))
    for r in rows:
        r["method"] = f"{r['method']}:{r['mode']}" if r["mode"] else r["method"]
    return rows
