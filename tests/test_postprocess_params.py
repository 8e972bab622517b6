"""Every documented parameter of every registered method reaches it through ``postprocess``
(issue 12, item 5): ``postprocess(est, "mle-apx", method="brentq")`` used to raise TypeError
because ``postprocess`` took ``method`` itself."""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest

import ldpopt
from ldpopt import oracles
from ldpopt.methods import registry

EST = oracles.get("oue", epsilon=1.0, d=8).estimate(np.array([5, 3, 2, 2, 1, 0, 0, 7]), 10)
BAD = "not-a-valid-value"   # rejected by every parameter (string choices, numbers, bools alike)


def method_params():
    out = []
    for name in sorted(registry._METHODS):
        for p in list(inspect.signature(registry.get(name).func).parameters)[1:]:
            out.append((name, p))
    return out


def test_every_method_parameter_is_listed_and_documented():
    pairs = method_params()
    assert ("mle-apx", "method") in pairs and ("em", "method") in pairs   # the clashing names
    for name, p in pairs:
        info = registry.get(name)
        assert p in registry.parameters(name)
        # documented: named in the method's docstring (or, for PowerNS, in Power's it defers to)
        doc = (info.func.__doc__ or "") + (registry.get("power").func.__doc__ if name == "power-ns" else "")
        assert re.search(rf"\b{re.escape(p)}\b", doc), (name, p)


@pytest.mark.parametrize("name,param", method_params())
def test_every_method_parameter_reaches_the_method(name, param):
    func = registry.get(name).func
    default = inspect.signature(func).parameters[param].default
    est = EST.as_ordered() if registry.get(name).needs_order else EST  # the item says what it assumes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the value reaches the method: an invalid value is refused by the method, naming it ...
        with pytest.raises((ValueError, TypeError), match=rf"\b{re.escape(param)}\b"):
            ldpopt.postprocess(est, name, **{param: BAD})
        # ... and a valid one gives exactly the direct call's result
        if default is not inspect.Parameter.empty:
            np.testing.assert_array_equal(ldpopt.postprocess(est, name, **{param: default}),
                                          func(est, **{param: default}))


def test_issue_reproducers_method_keyword():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ldpopt.postprocess(EST, "mle-apx", method="brentq")
        e = ldpopt.postprocess(EST, "em", method="iterative")
        np.testing.assert_array_equal(a, registry.get("mle-apx").func(EST, method="brentq"))
        np.testing.assert_array_equal(e, registry.get("em").func(EST, method="iterative"))
    # brentq is the cross-check of the exact sort path: same answer to rounding
    np.testing.assert_allclose(a, ldpopt.postprocess(EST, "mle-apx"), atol=1e-12)


@pytest.mark.parametrize("name", sorted(registry._METHODS))
def test_unknown_parameter_is_an_error_naming_it(name):
    with pytest.raises(TypeError, match=r"no parameter 'bogus_option'"):
        ldpopt.postprocess(EST, name, bogus_option=1)
    # the method's own name is not a parameter: passing ``estimate=`` again is refused, not shadowed
    with pytest.raises(TypeError, match=r"'estimate'"):
        ldpopt.postprocess(EST, name, estimate=EST)
