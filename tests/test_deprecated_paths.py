"""The import paths of modules that moved keep working for one release: importing one warns with a
DeprecationWarning naming its new path, and its names are the new module's objects."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

E = "ldpopt.experiments"
#: old module → (new module, a name both must give)
MOVED = {
    f"{E}.tasks": (f"{E}.registry", "get_kind"),
    **{f"{E}.tasks_{m}": (f"{E}.task_kinds.{m}", name) for m, name in [
        ("wang", "full_domain"), ("wang_runs", "combine_bias_variance"), ("jia", "method_spec"),
        ("uncertainty", "coverage_table"), ("uncertainty_batch", "coverage_batch"), ("numeric", "numeric"),
        ("ranges", "parse_method"), ("pooling", "group_specs"), ("channels", "designs"), ("poisoning", "poisoning"),
        ("sketches", "sketches"), ("heavy", "heavy_discovery"), ("multi", "multi")]},
    f"{E}.plot": (f"{E}.figures.draw", "plot"),
    f"{E}.plots_jia": (f"{E}.figures.jia", "plot_noise"),
    **{f"{E}.plot_{m}": (f"{E}.figures.{m}", name) for m, name in [
        ("wang", "plot_full_domain"), ("style", "shared_legend"), ("choose", "choice_regret"),
        ("coverage", "plot_coverage"), ("channels", "curves"), ("heavy", "plot_heavy"), ("multi", "plot_multi"),
        ("numeric", "plot_numeric"), ("poisoning", "plot_poisoning"), ("pooling", "plot_pooling"),
        ("ranges", "plot_range_queries"), ("sketches", "plot_sketches")]},
    **{f"{E}.claims_{m}": (f"{E}.claims.{m}", name) for m, name in [
        ("table", "cell_means"), ("format", "fmt"), ("named", "bias_sums"), ("jia", "jia")]},
    "ldpopt.verify.claims": ("ldpopt.verify.equivalences", "check_equivalence"),
    **{f"ldpopt.kernels.{old}": (f"ldpopt.xp.{new}", name) for old, new, name in [
        ("xp", "forms", "norm_sub"), ("xp_check", "check", "check_simplex"), ("xp_cut", "cut", "norm_cut"),
        ("xp_mle", "mle", "grr_mle")]},
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_warns_naming_the_new_one_and_forwards(old):
    new, name = MOVED[old]
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated.*use {new}"):
        mod = importlib.import_module(old)
    assert getattr(mod, name) is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        mod.not_a_name  # noqa: B018


def test_old_private_helpers_of_the_kinds_reach_the_toolkit():
    """Modules written against the flat layout import the shared helpers under their old names."""
    from ldpopt.experiments import toolkit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = importlib.import_module(f"{E}.tasks_wang")
        tasks = importlib.import_module(f"{E}.tasks")
    assert old._params is toolkit.params and old._simulate is toolkit.simulate
    assert old._error_rows is toolkit.error_rows and old._load is toolkit.load_dataset
    assert tasks.kind is importlib.import_module(f"{E}.registry").kind


def test_the_former_claims_module_names_warn_from_the_claims_package():
    from ldpopt.experiments import claims
    from ldpopt.experiments.claims import verdicts

    with pytest.warns(DeprecationWarning, match=r"experiments\.claims\.reproduction is deprecated.*claims\.verdicts"):
        assert claims.reproduction is verdicts.reproduction
    with pytest.raises(AttributeError):
        claims.not_a_name  # noqa: B018


def _unexported() -> list[tuple[str, str, str]]:
    """(package, former name, its module[:name]) for every name a package's ``__all__`` no longer lists."""
    import ldpopt

    out = []
    for sub in ldpopt.SUBMODULES:
        pkg = importlib.import_module(f"ldpopt.{sub}")
        names = getattr(vars(pkg).get("__getattr__"), "names", {})
        out += [(pkg.__name__, old, home) for old, home in names.items()]
    return out


def test_the_names_a_package_no_longer_exports_warn_and_answer_the_same_object():
    found = _unexported()
    assert len(found) >= 60, len(found)
    for package, old, home in found:
        pkg = importlib.import_module(package)
        module, _, new = home.partition(":")
        assert old not in pkg.__all__, (package, old)
        with pytest.warns(DeprecationWarning, match=rf"{package}\.{old} is deprecated and will be removed in ldpopt "
                                                    rf"\d+\.\d+\.\d+; use {module}\.{new or old} instead"):
            got = getattr(pkg, old)
        assert got is getattr(importlib.import_module(module), new or old), (package, old)
    # `from package import name` takes the same path, pointed at the caller's line
    with pytest.warns(DeprecationWarning, match="ldpopt.verify.exit_code is deprecated") as record:
        from ldpopt.verify import exit_code  # noqa: F401
    assert record[0].filename == __file__
    with pytest.raises(AttributeError, match="has no attribute 'not_a_name'"):
        importlib.import_module("ldpopt.verify").not_a_name  # noqa: B018
