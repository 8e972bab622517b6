"""Tests mirror the package (DESIGN.md, "tests/"): every module ``ldpopt/<pkg>/.../<mod>.py`` has a test
named after it — ``tests/test_<mod>.py``, ``tests/test_<pkg>_<mod>.py`` or ``tests/test_<pkg>.py`` for
one of its packages — or an entry in :data:`COVERED_BY` naming the test file that exercises it: that
file must import the module, or contain the given text (a command, a config, a public name through
which it runs). A module that moved (its old path answered by ``ldpopt._deprecated``'s finder) is covered by
``test_deprecated_paths.py``'s table. A new module with none of these fails here, and so does an entry
that went stale."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_deprecated_paths import MOVED

import ldpopt

ROOT = Path(ldpopt.__file__).resolve().parent
TESTS = Path(__file__).resolve().parent

#: module → the test file importing it, or (test file, text it contains) where it runs indirectly
COVERED_BY: dict[str, str | tuple[str, str]] = {
    "ldpopt.multi.grid_attacks": "test_range_attacks.py",
    "ldpopt.noise": "test_noise_protocol.py",
    "ldpopt.conformance.noise": ("test_noise_protocol.py", "check_mechanism"),
    "ldpopt.planning": "test_plan.py",
    "ldpopt._atomic": "test_cli_files.py",
    "ldpopt._blas": ("test_user_separable_speed.py", "one_thread"),
    "ldpopt.experiments.figures.ldpcube": ("test_winrate_report.py", "ldpcube_grid"),
    "ldpopt.experiments.task_kinds.ldpcube": "test_winrate_report.py",
    "ldpopt.methods.shrink": "test_wiener.py",
    "ldpopt.methods.deployments": ("test_method_deployments.py", "from ldpopt.methods import deployments"),
    "ldpopt.hierarchy.tree": ("test_hierarchy_gls.py", "Tree"),
    "ldpopt.multi.cells": ("test_cells_forms.py", "marginal_cells"),
    "ldpopt.uncertainty.celltable": ("test_cells_forms.py", "COLUMNS"),
    "ldpopt.robust.evasion": ("test_poisoning_stress.py", "evasive_shape"),
    "ldpopt.robust.guarded": ("test_poisoning_stress.py", "guarded_lift"),
    "ldpopt.robust.evidence": ("test_robust_defaults.py", "attack_evidence"),
    "ldpopt.robust.ties": ("test_robust_defaults.py", "tie_estimate"),
    "ldpopt.multi.drift": "test_choose_drift.py",
    "ldpopt.robust.profile": ("test_poisoning_stress.py", "profile_rates"),
    "ldpopt._deprecated": ("test_deprecated_paths.py", 'DeprecationWarning'),
    "ldpopt.experiments._moved": ("test_deprecated_paths.py", "tasks_wang"),
    "ldpopt._malloc": ("test_verify_large_d.py", 'keep_freed_memory'),
    "ldpopt._public": "test_docstrings.py",
    "ldpopt._secure": ("test_reliability_audit.py", '"secure"'),
    "ldpopt._table": "test_tables_whole.py",
    "ldpopt._userfunc": ("test_extending_doc.py", 'my_method.py:'),
    "ldpopt._validation": "test_reliability_audit.py",
    "ldpopt.aggregate.dask": "test_aggregate_cluster.py",
    "ldpopt.aggregate.gpus": "test_kernels_lanes.py",
    "ldpopt.aggregate.shards": "test_aggregate_dask_cli.py",
    "ldpopt.cli._args": "test_cli_plain_csv.py",
    "ldpopt.cli._commands": "test_cli_fuzz.py",
    "ldpopt.cli._io": "test_cli_plain_csv.py",
    "ldpopt.cli._params": "test_cli_postprocess.py",
    "ldpopt.cli._recorded": ("test_provenance.py", "note: from"),
    "ldpopt.cli._problemfile": "test_problem_conformance.py",
    "ldpopt.cli._problemtypes": "test_cli_solve_file.py",
    "ldpopt.cli.aggregate": ("test_aggregate_dask_cli.py", '"aggregate",'),
    "ldpopt.cli.choose": ("test_cli_uncertainty.py", '"choose",'),
    "ldpopt.cli.heavy_hitters": ("test_heavy_cli.py", '"heavy-hitters",'),
    "ldpopt.cli.multi": ("test_multi_cli.py", '"multi",'),
    "ldpopt.cli.perturb": ("test_cli_files.py", '"perturb",'),
    "ldpopt.cli.postprocess_robust": ("test_robust_cli_experiment.py", '"--robust"'),
    "ldpopt.estimate": "test_bayes.py",
    "ldpopt.experiments.claims.format": "test_claims_wang.py",
    "ldpopt.experiments.claims.named": ("test_claims_wang.py", 'def test_bias_sums_and_variances_recovered'),
    "ldpopt.experiments.claims.table": "test_claims_wang.py",
    "ldpopt.experiments.claims.verdicts": "test_claims_wang.py",
    "ldpopt.experiments.config": "test_experiment_runner.py",
    "ldpopt.experiments.evaluation": "test_evaluate.py",
    "ldpopt.experiments.evaluation_table": ("test_evaluate.py", 'evaluate('),
    "ldpopt.experiments.figures.choose": "test_plots.py",
    "ldpopt.experiments.figures.coverage": ("test_plot_coverage.py", 'figure("coverage")'),
    "ldpopt.experiments.figures.draw": "test_plots.py",
    "ldpopt.experiments.figures.longitudinal": ("test_longitudinal_experiment.py", 'plot('),
    "ldpopt.experiments.figures.multi": ("test_multi_experiment.py", 'plot('),
    "ldpopt.experiments.figures.poisoning": ("test_robust_cli_experiment.py", 'plot('),
    "ldpopt.experiments.figures.sketches": ("test_sketch_experiment.py", 'plot('),
    "ldpopt.experiments.figures.style": "test_plots.py",
    "ldpopt.experiments.runner": "test_experiments_wang.py",
    "ldpopt.experiments.task_kinds.longitudinal": ("test_longitudinal_experiment.py", '"ext_longitudinal"'),
    "ldpopt.experiments.task_kinds.multi": ("test_multi_experiment.py", '"ext_multi"'),
    "ldpopt.experiments.task_kinds.poisoning": ("test_robust_cli_experiment.py", 'ext_poisoning'),
    "ldpopt.experiments.task_kinds.sketches": "test_sketch_experiment.py",
    "ldpopt.experiments.task_kinds.wang_runs": "test_experiments_wang.py",
    "ldpopt.experiments.toolkit": "test_deprecated_paths.py",
    "ldpopt.hierarchy.collect": "test_hierarchy_variance.py",
    "ldpopt.hierarchy.haar": "test_hierarchy_variance.py",
    "ldpopt.hierarchy.nonneg": ("test_hierarchy_consistency.py", 'nonnegative_heuristic'),
    "ldpopt.interop._common": ("test_interop_formats.py", 'ldpopt.interop'),
    "ldpopt.interop._xxh32": "test_interop_formats.py",
    "ldpopt.interop.audit_peers": "test_interop_audit.py",
    "ldpopt.interop.conformance": "test_interop_peers.py",
    "ldpopt.interop.multi_freq_ldpy": "test_interop_formats.py",
    "ldpopt.interop.multi_freq_ldpy_multi": "test_multi_interop.py",
    "ldpopt.interop.opendp": ("test_interop_peers.py", 'opendp'),
    "ldpopt.interop.pure_ldp": "test_interop_peers.py",
    "ldpopt.interop.pure_ldp_hh": "test_heavy_interop.py",
    "ldpopt.interop.pure_ldp_rappor": "test_rappor_interop.py",
    "ldpopt.interop.pure_ldp_sketch": "test_sketch_interop.py",
    "ldpopt.methods._args": ("test_bayes.py", 'must be finite'),
    "ldpopt.methods.baseline": "test_methods_closed_forms.py",
    "ldpopt.methods.channel_inverse": "test_channel.py",
    "ldpopt.methods.channel_mle": "test_channel.py",
    "ldpopt.methods.mle": "test_mle_apx.py",
    "ldpopt.methods.mle_printed": ("test_mle_apx.py", 'mle_apx_formula_arxiv'),
    "ldpopt.methods.normalize": "test_verify.py",
    "ldpopt.methods.registry": "test_postprocess_params.py",
    "ldpopt.methods.threshold": "test_projection_pivot.py",
    "ldpopt.multi.calm_consistency": ("test_multi_consistency.py", 'calm_consistency'),
    "ldpopt.multi.dataset": ("test_multi_collect.py", 'MultiDataset'),
    "ldpopt.multi.fake_data": "test_multi_collect.py",
    "ldpopt.multi.generate": ("test_multi_data.py", 'item_presence'),
    "ldpopt.multi.marginals": ("test_multi_consistency.py", 'all_k_way'),
    "ldpopt.multi.problem": ("test_multi_cli.py", 'consistency_problem'),
    "ldpopt.multi.protocol": "test_multi_collect.py",
    "ldpopt.multi.sampled": "test_multi_collect.py",
    "ldpopt.multi.split": ("test_multi_collect.py", 'SPL'),
    "ldpopt.report": "test_self_contained.py",
    "ldpopt.robust._draws": ("test_robust_attacks.py", 'best_bucket_pmf'),
    "ldpopt.robust.apa": ("test_robust_attacks.py", 'apa'),
    "ldpopt.robust.attack_counts": ("test_robust_attacks.py", 'attack_counts'),
    "ldpopt.robust.crafting": ("test_robust_attacks.py", 'padding_ones'),
    "ldpopt.robust.forms": ("test_oracle_toy.py", 'report_form'),
    "ldpopt.sketches.consistency": "test_cli_sketches.py",
    "ldpopt.sketches.rappor_decode": ("test_sketch_decode.py", 'lasso_ls'),
    "ldpopt.sketches.ridge": "test_sketch_ridge.py",
    "ldpopt.testing": "test_method_toy.py",
    "ldpopt.uncertainty.fit": "test_power_batch.py",
    "ldpopt.uncertainty.queryspec": ("test_recommend.py", 'parse_query'),
    "ldpopt.uncertainty.resample": "test_power_batch.py",
    "ldpopt.uncertainty.result": ("test_uncertainty_analytic.py", 'intervals('),
    "ldpopt.uncertainty.selective": "test_uncertainty_topk.py",}

#: modules no test names or exercises directly yet (each a gap to close, not an exemption to grow)
UNTESTED = {"ldpopt.cli._limits", "ldpopt.cli._paths", "ldpopt.robust.apa_hashing"}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name → file of every module of the package (``__init__``/``__main__`` and the shipped
    example files aside)."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root.parent).with_suffix("")
        if p.name in ("__init__.py", "__main__.py") or "examples" in rel.parts:
            continue
        out[".".join(rel.parts)] = p
    return out


def named_tests(dotted: str, tests: Path = TESTS) -> list[str]:
    """The test files named after module ``dotted`` that exist."""
    *pkgs, mod = dotted.split(".")[1:]
    mod = mod.lstrip("_")
    names = [f"test_{mod}.py", *(f"test_{p}_{mod}.py" for p in pkgs), *(f"test_{p}.py" for p in pkgs)]
    return [n for n in names if (tests / n).is_file()]


def imports(test: Path, dotted: str) -> bool:
    """Whether ``test`` imports module ``dotted`` (``import a.b``, ``from a.b import x``, ``from a import b``)."""
    parent, _, leaf = dotted.rpartition(".")
    for n in ast.walk(ast.parse(test.read_text(encoding="utf-8"))):
        if isinstance(n, ast.ImportFrom) and n.module:
            if n.module == dotted or n.module.startswith(dotted + ".") or (n.module == parent and
                                                                          any(a.name == leaf for a in n.names)):
                return True
        elif isinstance(n, ast.Import) and any(a.name == dotted or a.name.startswith(dotted + ".") for a in n.names):
            return True
    return False


def uncovered(root: Path = ROOT, tests: Path = TESTS, covered=None, untested=frozenset(), moved=()) -> list[str]:
    """One line per module without a named test, a valid :data:`COVERED_BY` entry or an :data:`UNTESTED` place."""
    covered = COVERED_BY if covered is None else covered
    out = []
    for dotted in modules(root):
        if named_tests(dotted, tests) or dotted in untested or dotted in moved:
            continue
        entry = covered.get(dotted)
        if entry is None:
            out.append(f"{dotted}: no tests/test_<module>.py and no COVERED_BY entry")
            continue
        name, text = (entry, None) if isinstance(entry, str) else entry
        path = tests / name
        if not path.is_file():
            out.append(f"{dotted}: COVERED_BY names {name}, which does not exist")
        elif text is None and not imports(path, dotted):
            out.append(f"{dotted}: {name} does not import it")
        elif text is not None and text not in path.read_text(encoding="utf-8"):
            out.append(f"{dotted}: {name} does not contain {text!r}")
    return out


def test_every_module_has_a_test():
    bad = uncovered(untested=UNTESTED, moved=set(MOVED))
    assert not bad, "modules without a test (DESIGN.md, tests/):\n" + "\n".join(bad)


def test_no_entry_is_stale():
    mods = modules()
    stale = [m for m in [*COVERED_BY, *UNTESTED] if m not in mods]
    assert not stale, f"COVERED_BY / UNTESTED name modules that no longer exist: {stale}"
    twice = [m for m in COVERED_BY if named_tests(m) or m in UNTESTED]
    assert not twice, f"entries for modules that have a named test or are listed as untested: {twice}"


@pytest.mark.parametrize("case", ["none", "not-importing", "text-missing", "named", "ok"])
def test_the_check_fails_for_a_module_without_a_test(tmp_path, case):
    pkg, tests = tmp_path / "ldpopt", tmp_path / "tests"
    (pkg / "sub").mkdir(parents=True)
    tests.mkdir()
    (pkg / "sub" / "thing.py").write_text("X = 1\n")
    (tests / "test_other.py").write_text("import os\n")
    covered = {"none": {}, "not-importing": {"ldpopt.sub.thing": "test_other.py"},
               "text-missing": {"ldpopt.sub.thing": ("test_other.py", "thing")},
               "named": {}, "ok": {"ldpopt.sub.thing": ("test_other.py", "import os")}}[case]
    if case == "named":
        (tests / "test_sub_thing.py").write_text("")
    bad = uncovered(pkg, tests, covered)
    assert bool(bad) == (case in ("none", "not-importing", "text-missing")), bad
