"""Deprecated: moved to :mod:`ldpopt.experiments.task_kinds.uncertainty`; this path keeps working for one release."""

from .._deprecated import moved

moved(globals(), "ldpopt.experiments.task_kinds.uncertainty", "ldpopt.experiments.toolkit", "ldpopt.experiments.registry",
      renames={"_load": "load_dataset", "_params": "params", "_thaw": "unfreeze", "_unfreeze": "unfreeze", "_simulate": "simulate",
                  "_answers": "answers", "_with_base": "with_base", "_one_estimate": "one_estimate",
                  "_error_rows": "error_rows", "_is_method_file": "is_method_file"})
