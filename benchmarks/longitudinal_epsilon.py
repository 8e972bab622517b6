"""The longitudinal ε table: each longitudinal oracle's closed-form ε of τ reports of one value
(``epsilon_rounds``; L-RAPPOR's exact one for the family held, ``exact_epsilon_rounds``) against the
brute-force maximum over the enumerated law of the τ reports (``rounds_channel``), max over outputs of
log max_v P / min_v P.

Settings: ε∞ = 3, ε₁ = 1, d = 3, τ = 1, 2, 3 (LOLOHA g = 2, over all g^d hash functions; L-RAPPOR one
cohort, h = 2, 5 bits, values 0 and 1 with disjoint filters). Seconds on one core.

Run: ``python benchmarks/longitudinal_epsilon.py``; writes benchmarks/results/longitudinal_epsilon.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ldpopt.oracles.longitudinal import LGRR, LOLOHA, LOSUE, LOUE, LRAPPOR, LSOUE, LSUE

OUT = Path(__file__).resolve().parent / "results" / "longitudinal_epsilon.md"


def _brute(M: np.ndarray) -> float:
    L = np.log(M)
    return float(np.max(L.max(axis=1) - L.min(axis=1)))


def main() -> None:
    oracles = [cls(3.0, 3, eps_1=1.0) for cls in (LGRR, LSUE, LSOUE, LOUE, LOSUE, LOLOHA)]
    oracles.append(LRAPPOR(3.0, 3, eps_1=1.0, num_bits=5, positions=np.array([[[0, 2, 4], [1, 3, 4]]])))
    rows = ["| oracle | τ | formula | enumeration | |Δ| |", "|---|---|---|---|---|"]
    worst = 0.0
    for o in oracles:
        for tau in (1, 2, 3):
            formula = o.exact_epsilon_rounds(tau) if isinstance(o, LRAPPOR) else o.epsilon_rounds(tau)
            brute = _brute(o.rounds_channel(tau).joint_matrix())
            worst = max(worst, abs(formula - brute))
            rows.append(f"| {o.label} | {tau} | {formula:.12f} | {brute:.12f} | {abs(formula - brute):.1e} |")
    text = ("ε∞ = 3, ε₁ = 1, d = 3 (module docstring of benchmarks/longitudinal_epsilon.py)\n\n"
            + "\n".join(rows) + f"\n\nmax |formula − enumeration| = {worst:.1e}\n")
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
