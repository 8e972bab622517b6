"""Deprecated: moved to :mod:`ldpopt.experiments.registry`; this path keeps working for one release."""

from .._deprecated import moved


def simulate(task, dataset, rng, **oracle_params):
    """The noisy estimate of ``dataset`` for a task (the old signature of
    :func:`ldpopt.experiments.toolkit.simulate`)."""
    from .toolkit import simulate as _simulate

    return _simulate(task, dataset.counts, dataset.d, rng, **oracle_params)


moved(globals(), "ldpopt.experiments.registry", "ldpopt.experiments.toolkit",
      renames={"_load": "load_dataset", "_params": "params", "_thaw": "unfreeze", "_unfreeze": "unfreeze", "_simulate": "simulate",
                  "_answers": "answers", "_with_base": "with_base", "_one_estimate": "one_estimate",
                  "_error_rows": "error_rows", "_is_method_file": "is_method_file"})
