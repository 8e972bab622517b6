"""A post-processing method of your own: least squares pulled toward the uniform distribution (docs/extending.md).

    f' = argmin_f ||f - f~||^2 + lam * ||f - 1/d||^2   on the probability simplex
       = the Euclidean projection of m = (f~ + lam/d) / (1 + lam) onto the simplex,

since the objective is (1 + lam) * ||f - m||^2 plus a constant. lam = 0 is Norm-Sub (CLS); a larger
lam trades bias toward uniform for less variance. Use it as

    ldpopt postprocess --counts examples/emoji_oue_eps1_counts.csv --oracle oue --epsilon 1 \
        --n 156941 --method examples/my_method.py:shrink_uniform
    ldpopt verify --quick --no-mc --oracles oue --method examples/my_method.py:shrink_uniform

or in Python (``import my_method`` registers it; ``ldpopt.postprocess(est, "shrink-uniform")``), or
in an experiment config (``methods = ["base", "norm-sub", "my_method.py:shrink_uniform"]``).
"""

import numpy as np

from ldpopt.methods import ProblemStatement, register
from ldpopt.methods.normalize import project_simplex

LAM = 0.5


def centre(estimate, lam=LAM):
    """m = (f~ + lam/d) / (1 + lam): the point the method projects onto the simplex."""
    return (estimate.f_tilde + lam / estimate.d) / (1.0 + lam)


@register(
    "shrink-uniform",
    label="Shrink-Uniform",
    family="closed-form",
    description="Least squares plus a ridge pull toward uniform, on the simplex (projection of a shrunk f~)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="expected O(d) (one simplex projection)",
    reference="docs/extending.md (an example); lam = 0 is Norm-Sub, Wang et al. arXiv §3.3",
    notes="Weak order: values whose shrunk estimate falls below the projection's shift tie at 0.",
    problem=ProblemStatement(
        "cls+ridge-uniform",
        "Shrink-Uniform minimises ||f - f~||^2 + lam ||f - 1/d||^2 on the simplex, i.e. projects its centre",
        lambda est: {"objective": "posterior", "mean": centre(est)}),
    batched=lambda estimate, F, lam=LAM: np.stack([project_simplex((f + lam / F.shape[1]) / (1.0 + lam))
                                                    for f in F]),
)
def shrink_uniform(estimate, lam: float = LAM) -> np.ndarray:
    """The projection of (f~ + lam/d)/(1 + lam) onto the probability simplex (``lam`` >= 0)."""
    if not lam >= 0:
        raise ValueError(f"lam must be >= 0, got {lam!r}")
    return project_simplex(centre(estimate, lam))
