"""What every task kind shares: the task's dataset, parameters and methods, the noisy estimate,
the methods' outputs and their query answers, and the error rows."""

from __future__ import annotations

import functools

import numpy as np

from .. import methods as _methods
from .. import oracles as _oracles
from ..datasets import Dataset
from ..queries import post_pos
from .registry import is_method_file

__all__ = ["QUERY_METHODS", "active_methods", "answers", "dataset_of", "error_rows", "load_dataset",
           "method_names", "one_estimate", "outputs", "params", "resample", "simulate", "task_oracle",
           "unfreeze", "with_base"]

#: pseudo-methods answered at query level, not registered post-processing methods
QUERY_METHODS = ("post-pos",)


@functools.lru_cache(maxsize=32)
def load_dataset(spec) -> Dataset:
    """The dataset a config names (loaded once per process).

    Parameters
    ----------
    spec : str or tuple of (key, value)
        A dataset name, or items with at least ``name``, loader arguments (``mode``, ``seed``, …),
        ``label`` (a display name only) and ``sample_n`` / ``sample_seed`` (default 0): the
        histogram redrawn once as Multinomial(sample_n, f) with that fixed seed (:func:`resample`),
        so the truth is the same in every task.
    """
    from .. import datasets

    if isinstance(spec, str):
        return datasets.load(spec)
    kw = dict(spec)
    n = kw.pop("sample_n", None)
    seed = kw.pop("sample_seed", 0)
    kw.pop("label", None)
    base = datasets.load(kw.pop("name"), **kw)
    return base if n is None else resample(base, int(n), seed)


def resample(ds: Dataset, n: int, seed) -> Dataset:
    """``ds`` with its histogram redrawn as Multinomial(n, f) (same labels and partitions)."""
    gen = np.random.default_rng(seed)
    counts = gen.multinomial(n, ds.frequencies).astype(np.int64)
    return Dataset(name=ds.name, counts=counts, labels=ds.labels, groups=ds.groups,
                   source=f"{ds.source}; resampled to n={n} users (Multinomial, seed {seed})",
                   partitions=ds.partitions, meta={**ds.meta, "resampled_n": n})


def dataset_of(task) -> Dataset:
    """The task's dataset (cached per process), honouring ``sample_n``."""
    return load_dataset(task.dataset)


def params(task) -> dict:
    """The task's ``params`` as plain lists and dicts (:func:`unfreeze`)."""
    return {k: unfreeze(v) for k, v in dict(task.params).items()}


def unfreeze(v):
    """A value the runner froze (lists to tuples, dicts to sorted item tuples) made plain again."""
    if isinstance(v, tuple) and v and all(isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) for x in v):
        return {k: unfreeze(x) for k, x in v}
    if isinstance(v, tuple):
        return [unfreeze(x) for x in v]
    return v


def method_names(task) -> list[str]:
    """The task's method names: ``"all"`` is every registered method (but those assuming an ordered
    domain); a ``FILE.py:NAME`` entry (made
    absolute when the config was loaded) is loaded in this process (a worker's too) and named NAME."""
    names = list(task.methods)
    if names == ["all"]:  # the datasets are categorical: not the methods assuming an ordered domain
        return [m for m in _methods.names() if not _methods.get(m).needs_order]
    return [_methods.resolve(m, where="methods").name if is_method_file(m) else m for m in names]


def active_methods(task) -> list[str]:
    """The config's methods, minus the slow ones (``params.slow_methods``, default the registry's
    fitted methods) in repetitions at or beyond ``params.slow_reps`` and for the oracles in
    ``params.slow_skip_oracles``."""
    p = params(task)
    names = method_names(task)
    slow = set(p.get("slow_methods", _methods.names("fitted")))
    slow_reps = p.get("slow_reps")
    skip = (slow_reps is not None and task.rep >= int(slow_reps)) or task.oracle in p.get("slow_skip_oracles", ())
    if skip:
        names = [m for m in names if m not in slow]
    return names


def task_oracle(task, d: int, **oracle_params):
    """The task's oracle for domain size ``d``: its name, ε and the parameters its config entry gives
    (``oracles = [{name = "olh", g = 8}]``: ``task.oracle_params``), ``oracle_params`` over them."""
    given = dict(getattr(task, "oracle_params", ()) or ())
    return _oracles.get(task.oracle, epsilon=task.epsilon, d=d, **{**given, **oracle_params})


def simulate(task, counts, d: int, rng, **oracle_params):
    """The noisy estimate of true ``counts`` under the task's oracle (:func:`task_oracle`) and ε: the
    oracle's exact fast path unless ``params.exact`` is set (then the real client path)."""
    oracle = task_oracle(task, d, **oracle_params)
    return oracle.simulate(counts, rng, exact=bool(params(task).get("exact", False)))


def outputs(est, names, method_params=None) -> dict[str, np.ndarray]:
    """f' of every registered method in ``names`` for one estimate (``post-pos`` is skipped: it is
    applied to query answers by the caller). A method derived from another (PowerNS from Power) reuses
    its source's output when both run with the same parameters."""
    mp = method_params or {}
    out: dict[str, np.ndarray] = {}
    for m in names:
        if m in QUERY_METHODS or m in out:
            continue
        src = _methods.get(m).derived_from if m in _methods.names() else None
        if src is not None and mp.get(m, {}) == mp.get(src[0], {}):
            if src[0] not in out:
                out[src[0]] = _methods.postprocess(est, src[0], **mp.get(src[0], {}))
            out[m] = src[1](out[src[0]])
            continue
        out[m] = _methods.postprocess(est, m, **mp.get(m, {}))
    return {m: out[m] for m in names if m in out}


def answers(Q, fs: dict, names) -> dict[str, np.ndarray]:
    """Query answers for each method (Q dense or sparse, n_queries × d); ``post-pos`` from Base's."""
    res = {m: np.asarray(Q @ f, dtype=np.float64).ravel() for m, f in fs.items()}
    if "post-pos" in names:
        res["post-pos"] = post_pos(res["base"] if "base" in res else np.asarray(Q @ fs["_base"]).ravel())
    return {m: res[m] for m in names if m in res}


def with_base(est, fs: dict) -> dict:
    """``fs`` with the raw estimate under ``_base`` when Base is not among them (for ``post-pos``)."""
    if "base" not in fs:
        fs = {**fs, "_base": np.asarray(est.f_tilde, dtype=np.float64)}
    return fs


def one_estimate(task):
    """(dataset, rng, estimate, method names, outputs with :func:`with_base`) of one task."""
    ds = dataset_of(task)
    rng = task.rng()
    est = simulate(task, ds.counts, ds.d, rng)
    names = active_methods(task)
    fs = with_base(est, outputs(est, names, params(task).get("method_params")))
    return ds, rng, est, names, fs


def error_rows(names, ans, truth, **cols) -> list[dict]:
    """MSE and MAE rows of each method's answers ``ans[m]`` against ``truth`` (+ columns ``cols``)."""
    rows = []
    for m in names:
        err = ans[m] - truth
        rows.append({"method": m, "metric": "mse", "value": float(np.mean(err ** 2)), **cols})
        rows.append({"method": m, "metric": "mae", "value": float(np.mean(np.abs(err))), **cols})
    return rows
