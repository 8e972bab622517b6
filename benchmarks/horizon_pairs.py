"""The whole-horizon ε of every longitudinal oracle against the exact worst pair of value sequences, by
enumeration (``ldpopt.oracles.horizon``): oracle × ε∞ × ε₁ × τ × k, the worst pair's log-likelihood
ratio under each relation and the ε ``epsilon_horizon`` states for it, with the old charge
(k·min(ε(τ − k + 1), ε∞), a bound only when the memo pattern is public).

Run: ``python benchmarks/horizon_pairs.py``; writes benchmarks/results/horizon_pairs.md (about 10 s).
"""

from __future__ import annotations

from pathlib import Path

from ldpopt.oracles import longitudinal as L
from ldpopt.oracles.horizon import worst_pair

CASES = [
    (lambda e, e1: L.LGRR(e, 3, eps_1=e1), "L-GRR"),
    (lambda e, e1: L.LSUE(e, 3, eps_1=e1), "L-SUE"),
    (lambda e, e1: L.LSOUE(e, 3, eps_1=e1), "L-SOUE"),
    (lambda e, e1: L.LOUE(e, 3, eps_1=e1), "L-OUE"),
    (lambda e, e1: L.LOSUE(e, 3, eps_1=e1), "L-OSUE"),
    (lambda e, e1: L.LOLOHA(e, 3, eps_1=e1, g=2), "LOLOHA g=2"),
    (lambda e, e1: L.LOLOHA(e, 3, eps_1=e1, g=3), "LOLOHA g=3"),
    (lambda e, e1: L.LRAPPOR(e, 3, eps_1=e1, num_bits=3, num_hashes=1, cohorts=2), "L-RAPPOR 3 bits h=1 C=2"),
    (lambda e, e1: L.DBitFlipPM(e, 3, bits=2), "dBitFlipPM bits=2"),
]
GRID = [(1.0, 0.5, 3, 2), (1.0, 0.5, 3, 3), (3.0, 2.7, 3, 2), (3.0, 2.997, 2, 2), (2.0, 1.0, 3, 2)]


def main() -> None:
    rows = [("| oracle | ε∞ | ε₁ | τ | k | worst, any | stated, any | worst, memo-pattern | stated, memo-pattern "
             "| old charge | any worst pair |"), "|" + "---|" * 11]
    for build, label in CASES:
        for e, e1, tau, k in GRID:
            try:
                o = build(e, e1)
            except ValueError:  # an ε₁ the OUE instantaneous responses do not reach at this ε∞
                continue
            wa, x, x2 = worst_pair(o, tau, k, "any")
            wp, _, _ = worst_pair(o, tau, k, "memo-pattern")
            sa, sp = o.epsilon_horizon(tau, k), o.epsilon_horizon(tau, k, relation="memo-pattern")
            memos = o._memos(k)
            old = o.epsilon_rounds(tau) if memos == 1 else memos * min(o.epsilon_rounds(tau - memos + 1), e)
            rows.append(f"| {label} | {e:g} | {e1 if 'dBit' not in label else '–'} | {tau} | {k} | {wa:.3f} | "
                        f"{sa:.3f} | {wp:.3f} | {sp:.3f} | {old:.3f} | {x} vs {x2} |")
    text = ("# Whole-horizon ε against the exact worst pair (d = 3)\n\n"
            "`python benchmarks/horizon_pairs.py`; log-likelihood ratios, exact enumeration over all sequences "
            "with at most k distinct values.\n\n" + "\n".join(rows) + "\n")
    out = Path(__file__).parent / "results" / "horizon_pairs.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
