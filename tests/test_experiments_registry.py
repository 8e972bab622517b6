"""The task kinds' registry (ldpopt/experiments/registry.py): every module of ``task_kinds/`` is
found without a list naming it, and the public ``experiments.kinds()`` stays the listing function
after the kinds' package is loaded."""

from __future__ import annotations

import sys

import pytest

from ldpopt import experiments
from ldpopt.experiments import registry, task_kinds


def test_a_module_dropped_in_task_kinds_is_found(tmp_path, monkeypatch):
    (tmp_path / "dropped_in.py").write_text(
        "from ldpopt.experiments.registry import kind\n\n"
        "@kind('dropped-in-kind')\n"
        "def dropped(task):\n"
        "    return [{'method': 'base', 'metric': 'mse', 'value': 0.0}]\n")
    before = registry.kinds()  # the built-in kinds registered first, into the registry kept below
    monkeypatch.setattr(task_kinds, "__path__", [*task_kinds.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_KINDS", dict(registry._KINDS))
    monkeypatch.delitem(sys.modules, "ldpopt.experiments.task_kinds.dropped_in", raising=False)
    registry._load_kind_modules.cache_clear()
    try:
        assert registry.kinds() == sorted([*before, "dropped-in-kind"])
        assert registry.get_kind("dropped-in-kind").__name__ == "dropped"
    finally:
        monkeypatch.undo()
        registry._load_kind_modules.cache_clear()
        sys.modules.pop("ldpopt.experiments.task_kinds.dropped_in", None)
    assert "dropped-in-kind" not in registry.kinds()
    with pytest.raises(ValueError, match="experiment kind must be one of"):
        experiments.registry.get_kind("no-such-kind")


def test_kinds_is_still_the_function_after_the_kinds_package_is_loaded():
    import ldpopt.experiments.task_kinds.wang  # noqa: F401

    assert callable(experiments.kinds) and "full-domain" in experiments.kinds()
