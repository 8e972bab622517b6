"""The check's gradient of a user's cvxpy objective (:func:`ldpopt.problems.check.verdict.cvxpy_grad`,
the affine nodes' Jacobians kept between the points of one check) against cvxpy's own ``expr.grad``,
bit for bit, on generated expressions and points; and the reuse it exists for."""

import math

import cvxpy as cp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt.problems.check.verdict import cvxpy_grad


def _dense(g):
    return g.toarray() if hasattr(g, "toarray") else np.atleast_2d(np.asarray(g, dtype=float))


def _inner(f, k, c, P, rng):
    """An affine or convex inner expression of f (index, slices, constant products, Parameters)."""
    d = f.shape[0]
    forms = [
        lambda: f - c,
        lambda: f[1:] - f[:-1],
        lambda: f[::2] * 3.0,
        lambda: cp.multiply(P, f) + 1.0,
        lambda: rng.standard_normal((3, d)) @ (f - c),
        lambda: cp.cumsum(f),
        lambda: f[[0, 2, 1]] - P[:3],
        lambda: (f - c) / 4.0,
        lambda: -f + cp.sum(f),  # a negation; a scalar term broadcast (cvxpy's own Jacobian)
        lambda: cp.multiply(np.r_[0.0, c[1:]], f),  # a zero factor (cvxpy's own Jacobian)
        lambda: cp.hstack([f[0] * 2.0, cp.sum(f - c)]),
        lambda: 0.5 * f[::-1] - f[-2::-2].sum() + f[-1],  # reversed and negative-step slices, an entry
    ]
    return forms[k % len(forms)]()


def _outer(e, k):
    forms = [
        lambda: cp.sum_squares(e),
        lambda: cp.sum(cp.maximum(0.3 * e, -0.7 * e)),
        lambda: cp.norm(e, 2),
        lambda: cp.sum(cp.huber(e, 0.05)),
        lambda: cp.norm1(e),
        lambda: cp.sum(cp.abs(e)) + cp.max(e),
        lambda: cp.sum(cp.square(e)) / 2,
        lambda: cp.log_sum_exp(e) + cp.sum(cp.pos(e)),
        lambda: -cp.sum(cp.entr(cp.abs(e) + 1e-3)) + cp.sum(cp.exp(e)),
        lambda: cp.sum(cp.kl_div(cp.abs(e) + 0.1, np.full(e.shape, 0.3))) - cp.sum(cp.log(cp.abs(e) + 0.2)),
        lambda: cp.quad_form(e, _psd(e.size)) + cp.sum(cp.logistic(e)),
        lambda: cp.sum_squares(cp.sum(cp.reshape(cp.hstack([e, 2 * e]), (e.size, 2), order="F"), axis=1)),
        lambda: cp.sum(cp.sum(cp.reshape(cp.hstack([e, -e]), (2, e.size), order="C"), axis=0, keepdims=True) ** 2)
        + cp.sum(cp.rel_entr(cp.abs(e) + 0.1, np.full(e.shape, 0.2))),
        lambda: _top_eigenvalue(e),
    ]
    return forms[k % len(forms)]()


def _top_eigenvalue(e):
    """λ_max of the symmetric part of e's first m² entries laid out as an m × m matrix, plus the
    squares of its transpose's entries: the PSD cone's atom and a matrix transpose."""
    m = math.isqrt(e.size)
    M = cp.reshape(e[: m * m], (m, m), order="F")
    return cp.lambda_max((M + M.T) / 2) + cp.sum_squares(cp.vec(M.T - 0.5, order="F"))


def _psd(n):
    B = np.arange(1.0, n * n + 1).reshape(n, n) % 7 - 3
    return B @ B.T / n + np.eye(n)


@settings(max_examples=examples(25), deadline=None)
@given(d=st.integers(3, 12), terms=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 6)), min_size=1, max_size=3),
       seed=st.integers(0, 2**31 - 1))
def test_the_memoised_gradient_is_cvxpys_bit_for_bit(d, terms, seed):
    rng = np.random.default_rng(seed)
    f = cp.Variable(d)
    c = rng.random(d)
    P = cp.Parameter(d, value=rng.random(d))
    expr = sum(_outer(_inner(f, i, c, P, rng), o) for i, o in terms)
    memo: dict = {}
    for _ in range(3):  # several points with one memo, as in one check
        f.value = rng.random(d) * rng.choice([1e-3, 1.0, 10.0])
        want = expr.grad[f]
        got = cvxpy_grad(expr, memo)[f]
        assert (want is None) == (got is None)
        if want is not None:
            assert np.array_equal(_dense(want), _dense(got))


def test_the_affine_jacobians_are_built_once_per_check(monkeypatch):
    from cvxpy.atoms.affine.affine_atom import AffAtom

    calls = []
    original = AffAtom._grad

    def counted(self, values):
        calls.append(type(self).__name__)
        return original(self, values)

    monkeypatch.setattr(AffAtom, "_grad", counted)
    d = 20
    f = cp.Variable(d)
    ft = np.linspace(0, 1, d)
    U = np.random.default_rng(3).standard_normal((d, 3))
    # a product with a dense constant matrix: cvxpy's own Jacobian (cvxcore), once per memo
    expr = cp.sum_squares(U.T @ (f - ft)) + cp.norm1(f - ft)
    memo: dict = {}
    f.value = np.full(d, 0.5)
    cvxpy_grad(expr, memo)
    first = len(calls)
    assert first > 0
    f.value = np.full(d, 0.25)
    cvxpy_grad(expr, memo)
    assert len(calls) == first  # the second point rebuilt no affine Jacobian
    f.value = np.full(d, 0.5)
    expr.grad  # noqa: B018 - cvxpy's own rebuilds them
    assert len(calls) > 2 * first - 1
    # the pinball objective's affine nodes (sums, differences, scalar products) are written directly
    calls.clear()
    pinball = cp.sum_squares(f - ft) + 1e-3 * cp.sum(cp.maximum(0.3 * (f - ft), -0.7 * (f - ft)))
    cvxpy_grad(pinball, {})
    assert calls == []


@settings(max_examples=examples(30), deadline=None)
@given(d=st.integers(3, 12), terms=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 13)), min_size=1, max_size=3),
       seed=st.integers(0, 2**31 - 1), ties=st.booleans(), scale=st.sampled_from([1e-3, 1.0, 10.0]))
def test_the_numpy_gradient_is_cvxpys_to_rounding(d, terms, seed, ties, scale):
    """:func:`numpy_grad` (the check's fast path) against cvxpy's own ``grad`` on generated
    expressions and points — kinks included (``ties``: values at the constant, so abs/maximum/norm
    arguments hit 0 and cvxpy's subgradient choice is what must be reproduced) — or None (declined:
    the caller asks cvxpy) only where cvxpy's own gradient is undefined."""
    from ldpopt.problems.objectives.recognise import numpy_grad

    rng = np.random.default_rng(seed)
    f = cp.Variable(d)
    c = rng.random(d)
    P = cp.Parameter(d, value=rng.random(d))
    expr = sum(_outer(_inner(f, i, c, P, rng), o) for i, o in terms)
    x = rng.random(d) * scale
    if ties:
        x[: d // 2] = c[: d // 2]
    f.value = x
    want = expr.grad[f]
    got = numpy_grad(expr, f, x)
    if want is None:  # undefined for cvxpy: declined
        assert got is None
        return
    assert got is not None
    w = _dense(want).ravel()
    assert np.allclose(got, w, rtol=1e-13, atol=1e-13 * max(1.0, float(np.max(np.abs(w)))))


@settings(max_examples=examples(30), deadline=None)
@given(d=st.integers(1, 20), seed=st.integers(0, 2**31 - 1), ties=st.booleans())
def test_the_numpy_gradient_of_a_top_eigenvalue_is_cvxpys(d, seed, ties):
    """λ_max of a symmetrised matrix read from f (weighted, reshaped, transposed) is written by
    :func:`numpy_grad` — not declined — and equals cvxpy's ``grad``, repeated eigenvalues included
    (``ties``: every entry equal, where the top eigenvector is the one ``eigh`` picks)."""
    from ldpopt.problems.objectives.recognise import numpy_grad

    rng = np.random.default_rng(seed)
    f = cp.Variable(d)
    m = int(rng.integers(1, math.isqrt(d) + 1))
    M = cp.reshape(cp.multiply(rng.standard_normal(d), f)[: m * m], (m, m), order="F")
    expr = cp.lambda_max((M + M.T) / 2) - 0.1
    x = np.full(d, 0.3) if ties else rng.standard_normal(d)
    f.value = x
    got = numpy_grad(expr, f, x)
    assert got is not None
    want = _dense(expr.grad[f]).ravel()
    assert np.allclose(got, want, rtol=1e-13, atol=1e-13 * max(1.0, float(np.max(np.abs(want)))))


#: outer atoms with a domain: cvxpy's gradient is None where an entry of their argument is <= 0
_DOMAIN_OUTER = [
    lambda e, c: -cp.sum(cp.entr(e)),
    lambda e, c: -cp.sum(cp.log(e)),
    lambda e, c: cp.sum(cp.kl_div(e, c)),
    lambda e, c: cp.sum(cp.rel_entr(e, c)),
    lambda e, c: cp.sum(cp.power(e, 1.5)),
    lambda e, c: -cp.geo_mean(e) if e.ndim == 1 and e.size > 1 else -cp.sum(cp.log(e)),
    lambda e, c: cp.norm_inf(e),  # a gradient cvxpy does not implement, at any point
]


@settings(max_examples=examples(40), deadline=None)
@given(d=st.integers(3, 12), inner=st.integers(0, 11), outer=st.integers(0, 6), other=st.integers(0, 13),
       seed=st.integers(0, 2**31 - 1), zeros=st.integers(0, 3), shift=st.sampled_from([0.0, -0.3, 0.5]))
def test_the_numpy_gradient_is_nan_exactly_where_cvxpys_is_undefined(d, inner, outer, other, seed, zeros, shift):
    """``numpy_grad(..., nan_where_undefined=True)`` on expressions whose atoms have a domain, at
    points on and outside its edge (entries set to 0, a shift below it), beside a second term:
    an array of NaN exactly where cvxpy's own ``grad`` gives none (None, the sum of None and a matrix
    raising, or an atom whose gradient it does not implement raising), else cvxpy's values."""
    from ldpopt.problems.objectives.recognise import numpy_grad

    rng = np.random.default_rng(seed)
    f = cp.Variable(d)
    c = rng.random(d) + 0.1
    P = cp.Parameter(d, value=rng.random(d))
    e = _inner(f, inner, c, P, rng)
    expr = _DOMAIN_OUTER[outer](e, np.full(e.shape, 0.3)) + _outer(_inner(f, other, c, P, rng), other)
    x = rng.random(d) + shift
    x[rng.choice(d, size=min(zeros, d), replace=False)] = 0.0
    f.value = x
    try:
        want = expr.grad[f]
    except (TypeError, NotImplementedError):  # None + a matrix in cvxpy's chain rule, or norm_inf: no gradient
        want = None
    got = numpy_grad(expr, f, x, nan_where_undefined=True)
    if want is None:
        assert got is not None and np.all(np.isnan(got))
        assert numpy_grad(expr, f, x) is None  # without the flag: declined, as before
        return
    assert got is not None
    w = _dense(want).ravel()
    assert np.allclose(got, w, rtol=1e-12, atol=1e-12 * max(1.0, float(np.max(np.abs(w)))))


def test_the_numpy_gradient_declines_outside_its_class():
    from ldpopt.problems.objectives.recognise import numpy_grad

    f, g = cp.Variable(4), cp.Variable(4)
    x = np.array([0.1, 0.2, 0.3, 0.4])
    assert numpy_grad(cp.sigma_max(cp.reshape(f, (2, 2), order="F")), f, x) is None  # an atom it does not write
    assert numpy_grad(cp.sum_squares(f - g), f, x) is None               # another variable
    assert numpy_grad(cp.sum(cp.power(f, 1.5)), f, x - 0.15) is None     # outside power's domain: cvxpy's None
    assert numpy_grad(-cp.sum(cp.entr(f)), f, x - 0.15) is None          # outside entr's domain: cvxpy's None
    assert numpy_grad(cp.sum(cp.kl_div(f, x)), f, x - 0.1) is None       # an entry at 0: cvxpy's None
    assert np.allclose(numpy_grad(cp.sum_squares(f) + cp.norm(f, 2), f, x), 2 * x + x / np.linalg.norm(x))
    assert np.array_equal(numpy_grad(cp.norm(f, 2), f, np.zeros(4)), np.zeros(4))  # cvxpy's 0 at the kink
    import scipy.sparse as sp

    S = sp.random_array((3, 4), density=0.6, format="csr", rng=np.random.default_rng(5)) + sp.eye_array(3, 4)
    U = np.random.default_rng(6).standard_normal((4, 2))
    for expr in (cp.sum_squares(S @ f - 1.0), cp.sum_squares(f @ U), cp.sum_squares(U.T @ f) + cp.sum(cp.abs(S @ f))):
        f.value = x
        assert np.allclose(numpy_grad(expr, f, x), _dense(expr.grad[f]).ravel(), rtol=1e-13, atol=1e-15)


@settings(max_examples=examples(20), deadline=None)
@given(d=st.integers(3, 12), picks=st.lists(st.integers(0, 11), min_size=1, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_recognitions_affine_rows_are_cvxpys_jacobian(d, picks, seed):
    """The rows A and offset b recognition reads off an affine argument (``_jacobian``: composed
    directly where it can, cvxpy's ``grad`` elsewhere) against cvxpy's own Jacobian and value at 0,
    and A f + b against cvxpy's value at a generated f."""
    from ldpopt.problems.objectives.recognise import _affine_rows, _jacobian

    rng = np.random.default_rng(seed)
    f = cp.Variable(d)
    c = rng.random(d)
    P = cp.Parameter(d, value=rng.random(d))
    arg = _inner(f, picks[0], c, P, rng)
    for k in picks[1:]:
        other = _inner(f, k, c, P, rng)
        if other.shape == arg.shape:
            arg = arg - 2.0 * other
    A, b = _jacobian(arg, f, d)
    f.value = np.zeros(d)
    want = _dense(arg.grad[f]).T
    assert np.allclose(A.toarray(), want, rtol=1e-15, atol=0.0)
    x = rng.random(d)
    f.value = x
    assert np.allclose(A @ x + b, np.asarray(arg.value).ravel(order="F"), rtol=1e-12, atol=1e-12)
    if picks[0] in (0, 1, 2, 3, 7, 9):  # slices, sums, constant products: composed, not cvxpy's
        assert _affine_rows(_inner(f, picks[0], c, P, rng), f, d) is not None


def test_reversed_slices_are_read_as_cvxpy_reads_them():
    """A slice with a negative step (cvxpy keeps it with its own bounds, which numpy reads otherwise)
    gives the rows and the gradient cvxpy gives."""
    from ldpopt.problems.objectives.recognise import _affine_rows, numpy_grad

    d = 6
    f = cp.Variable(d)
    x = np.arange(1.0, d + 1.0)
    for arg in (f[::-1], f[-2::-2], f[4:0:-1], f[::-1][1:]):
        f.value = np.zeros(d)
        assert np.array_equal(_affine_rows(arg, f, d).toarray(), _dense(arg.grad[f]).T)
        f.value = x
        expr = cp.sum_squares(arg - 1.0)
        assert np.allclose(numpy_grad(expr, f, x), _dense(expr.grad[f]).ravel(), rtol=1e-15, atol=0)


@settings(max_examples=examples(30), deadline=None)
@given(d=st.integers(1, 20), seed=st.integers(0, 2**31 - 1))
def test_a_maximums_diagonal_rows_are_scipys_sums(d, seed):
    """``maximum`` of two per-value arguments: its linear part and kink rows formed directly
    (``_diag_csr``) are scipy's diags-and-sums bit for bit, zero slopes (not stored) included."""
    import scipy.sparse as sp

    from ldpopt.problems.objectives.recognise import _diag_csr

    rng = np.random.default_rng(seed)
    a_s, a_t = (rng.choice([0.0, 0.3, -0.7, 1.0, rng.random()], d) for _ in range(2))
    W = rng.random(d)
    A_s, A_t = sp.diags_array(a_s).tocsr(), sp.diags_array(a_t).tocsr()
    assert np.asarray((A_s + A_t).T @ (W / 2)).ravel().tobytes() == np.asarray(_diag_csr(a_s + a_t).T @ (W / 2)).tobytes()
    old, new = sp.csr_array(A_s - A_t), _diag_csr(a_s - a_t)
    assert old.nnz == new.nnz and np.array_equal(old.toarray(), new.toarray())


_ATTRS = [{}, {"nonneg": True}, {"bounds": [0.0, 1.0]}, {"integer": True}]


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(1, 6), st.sampled_from(range(len(_ATTRS))), st.sampled_from(["float", "int", "shape", "none", "nan", "inf"]),
       st.integers(0, 2**31 - 1))
def test_set_value_stores_what_the_setter_stores(d, attr, kind, seed):
    """``recognise.set_value`` (the setter's validation skipped for a plain Variable and a float64
    array of its shape) leaves the leaf's value exactly as ``leaf.value = val`` does, and raises
    where the setter raises, on generated variables (with and without attributes) and values."""
    from ldpopt.problems.objectives.recognise import set_value

    rng = np.random.default_rng(seed)
    val = {"float": rng.standard_normal(d), "int": rng.integers(-3, 3, d), "shape": rng.standard_normal(d + 1),
           "none": None, "nan": np.full(d, np.nan), "inf": np.r_[np.inf, np.zeros(d - 1)]}[kind]
    got, want = cp.Variable(d, **_ATTRS[attr]), cp.Variable(d, **_ATTRS[attr])
    errors = []
    for leaf, setter in ((got, set_value), (want, lambda lf, v: setattr(lf, "value", v))):
        try:
            setter(leaf, None if val is None else val.copy())
            errors.append(None)
        except ValueError as exc:
            errors.append(type(exc))
    assert errors[0] == errors[1]
    if errors[0] is None:
        a, b = got.value, want.value
        assert (a is None) == (b is None)
        if a is not None:
            assert type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype
            assert np.array_equal(a, b, equal_nan=True)
