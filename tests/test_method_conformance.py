"""``ldpopt.testing.check_method`` over every registered method, and each of its checks catching a
method that breaks it (a check that cannot fail proves nothing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ldpopt import methods
from ldpopt.methods import normalize
from ldpopt.testing import CheckFailed, check_method, estimates_for_checks

ESTIMATES = estimates_for_checks()


@pytest.mark.parametrize("name", methods.names())
def test_every_registered_method_passes_the_conformance_checks(name):
    info = methods.get(name)
    # a method that assumes an ordered domain runs on the same estimates declared ordered
    done = check_method(name, [e.as_ordered() for e in ESTIMATES] if info.needs_order else ESTIMATES)
    assert done["output"] == done["deterministic"] >= len(ESTIMATES) - 1
    # every declared capability was exercised, not skipped
    assert (done["non_negative"] > 0) == (info.non_negative == "yes")
    assert (done["sums_to_one"] > 0) == (info.sums_to_one == "yes")
    assert (done["problem"] > 0) == (info.problem is not None)
    assert (done["batched"] > 0) == (info.batched is not None)
    assert (done["analytic"] > 0) == info.analytic
    assert (done["derived"] > 0) == (info.derived_from is not None)
    assert (done["pivot_scale"] > 0) == (info.pivot_scale is not None)
    if info.applies is not None:
        assert done["applies"] > 0


def test_the_records_declare_consistent_capabilities():
    """The facts the features used to keep in lists far away, asked of the records (no list of
    names here: a new method is checked by what it declares)."""
    names = methods.names()
    assert sorted(n for f in methods.registry.FAMILIES for n in methods.names(f)) == sorted(
        n for n in names if methods.get(n).family is not None)  # the families partition the family-tagged
    unordered = ESTIMATES[0]
    for name in names:
        info = methods.get(name)
        assert info.label and info.name == name
        if info.derived_from is not None:
            assert info.derived_from[0] in names, name
        if info.variant_of is not None:
            assert info.variant_of in names, name
        # needs_order is what why_not says on an estimate without a declared order
        said = info.why_not(unordered, **info.param_examples)
        assert (said is not None and "ordered domain" in said) == info.needs_order, name


def _planted(name, **changes):
    return dataclasses.replace(methods.get(name), declared=False, **changes)


def test_a_wrong_closed_form_fails_its_problem_statement():
    # Norm-Mul's output claimed to be the CLS solution: the certificate refuses it
    with pytest.raises(CheckFailed, match=r"problem .*'cls'"):
        check_method(_planted("norm-sub", func=normalize.norm_mul), ESTIMATES)


def test_a_wrong_batched_form_is_caught():
    wrong = _planted("norm-sub", batched=lambda est, F: normalize.norm_mul_rows(F))
    with pytest.raises(CheckFailed, match="batched form differs"):
        check_method(wrong, ESTIMATES)


def test_a_false_table_1_claim_is_caught():
    with pytest.raises(CheckFailed, match="non_negative"):
        check_method(_planted("norm", non_negative="yes", linear=None), ESTIMATES)
    with pytest.raises(CheckFailed, match="sums_to_one"):
        check_method(_planted("base-pos", sums_to_one="yes", batched=None), ESTIMATES)


def test_a_wrong_derivation_is_caught():
    with pytest.raises(CheckFailed, match="derived"):
        check_method(_planted("power-ns", derived_from=("power", lambda f: f)), ESTIMATES)


def test_a_method_that_runs_where_it_says_it_does_not_apply_is_caught():
    says_no = _planted("norm-sub", applies=lambda est, **kw: "no" if est.oracle == "a-new-oracle" else None,
                       problem=None, batched=None)
    with pytest.raises(CheckFailed, match="applies"):
        check_method(dataclasses.replace(says_no, declared=True), ESTIMATES)


def test_a_nondeterministic_or_misshapen_plain_function_is_caught():
    gen = np.random.default_rng(0)
    with pytest.raises(CheckFailed, match="deterministic"):
        check_method(lambda est: est.f_tilde + gen.random(est.d) * 1e-3, ESTIMATES)
    with pytest.raises(ValueError, match=r"returned shape \(5,\)"):
        check_method(lambda est: np.zeros(5), ESTIMATES)


def test_a_wrong_linear_form_is_caught():
    # Base's output declared with Norm's form: the analytic interval is not around the output
    from ldpopt.methods.linear import Centring

    with pytest.raises(CheckFailed, match="analytic"):
        check_method(_planted("base", linear=Centring(1.0), batched=None), ESTIMATES)
