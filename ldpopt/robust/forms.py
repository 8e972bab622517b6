"""The attacks and per-report detectors of this package, written once per report form.

Notes: docs/notes/poisoning.md, "ldpopt.robust.forms"."""

from __future__ import annotations

import numpy as np

from .. import kernels
from .._validation import _check_int, check_values
from ..oracles.base import FrequencyOracle
from ._draws import _subset_sums, best_bucket_pmf
from .crafting import _blocks, _n_reports, _olh_search, _uniform_subsets, hr_best_outputs, padding_ones, report_device

__all__ = ["FORMS", "ReportForm", "form_of", "register_form"]


class ReportForm:
    """The answers for a report form; this base class's are the generic ones (no attack, the support
    matrix for the detectors). ``targets`` are checked (sorted, distinct, in range), ``others`` the
    other values of [0, d), ``m`` ≥ 1 (≥ 0 for the counts), ``gen`` a Generator."""

    def mga_reports(self, oracle: FrequencyOracle, targets, others, m: int, gen, candidates: int, device):
        """m maximal gain reports, in ``oracle``'s report format."""
        raise ValueError(f"no maximal gain attack for oracle {oracle.name!r}")

    def mga_counts(self, oracle: FrequencyOracle, targets, others, m: int, gen, candidates: int) -> np.ndarray:
        """Support counts of m maximal gain reports, exact in law."""
        raise ValueError(f"no maximal gain attack for oracle {oracle.name!r}")

    def mga_mean_support(self, oracle: FrequencyOracle, targets, candidates: int) -> float:
        """s̄: the expected number of targets one maximal gain report supports."""
        raise ValueError(f"no maximal gain attack for oracle {oracle.name!r}")

    def mga_other_rate(self, oracle: FrequencyOracle, targets) -> float:
        """The probability that one maximal gain report supports a given non-target (:mod:`.profile`)."""
        raise ValueError(f"no per-value support rate of the maximal gain attack for oracle {oracle.name!r}")

    def apa_reports(self, oracle: FrequencyOracle, targets, m: int, rng):
        """m adaptive pattern reports (:mod:`.apa`)."""
        raise _no_apa(oracle)

    def apa_counts(self, oracle: FrequencyOracle, targets, m: int, rng) -> np.ndarray:
        """Support counts of m adaptive pattern reports, exact in law."""
        raise _no_apa(oracle)

    def apa_mean_support(self, oracle: FrequencyOracle, r: int) -> float:
        """s̄ of the adaptive pattern attack on r targets."""
        raise _no_apa(oracle)

    def support_sizes(self, oracle: FrequencyOracle, reports, device) -> np.ndarray:
        """|S(y)| per report (int64): the row sums of ``oracle.support_matrix``, in blocks."""
        rep = np.asarray(reports)
        out = np.empty(_n_reports(rep), dtype=np.int64)
        for sl in _blocks(out.size, oracle.d):
            out[sl] = oracle.support_matrix(rep[sl]).sum(axis=1)
        return out

    def suspect_scores(self, oracle: FrequencyOracle, reports, suspect: np.ndarray, device) -> np.ndarray:
        """Per report, how many of the (checked, sorted) ``suspect`` values its support set holds."""
        rep = np.asarray(reports)
        out = np.empty(_n_reports(rep), dtype=np.int64)
        for sl in _blocks(out.size, oracle.d):
            out[sl] = oracle.support_matrix(rep[sl])[:, suspect].sum(axis=1)
        return out


def _no_apa(oracle: FrequencyOracle) -> ValueError:
    return ValueError(f"the adaptive pattern attack is defined for OUE, SUE, OLH and BLH (unary and hashed reports), "
                      f"not for oracle {oracle.name!r}")


#: report form → its answers (:func:`form_of`)
FORMS: dict[str, ReportForm] = {}
_GENERIC = ReportForm()


def register_form(form: str):
    """Class decorator: register a :class:`ReportForm` subclass (instantiated once) for ``form``."""
    def deco(cls):
        FORMS[form] = cls()
        return cls
    return deco


def form_of(oracle: FrequencyOracle) -> ReportForm:
    """The answers for ``oracle``'s ``report_form`` (the generic ones when it declares none known here)."""
    return FORMS.get(getattr(oracle, "report_form", None) or "", _GENERIC)


@register_form("value")
class ValueReports(ReportForm):
    """A report is one value, supporting itself (GRR): MGA reports a uniform target (s̄ = 1)."""

    def mga_reports(self, oracle, targets, others, m, gen, candidates, device):
        return gen.choice(targets, size=m)

    def mga_counts(self, oracle, targets, others, m, gen, candidates):
        out = np.zeros(oracle.d, dtype=np.int64)
        out[targets] = gen.multinomial(m, np.full(targets.size, 1.0 / targets.size))
        return out

    def mga_mean_support(self, oracle, targets, candidates):
        return 1.0

    def mga_other_rate(self, oracle, targets):
        return 0.0

    def support_sizes(self, oracle, reports, device):
        return np.ones(check_values(reports, oracle.d, "reports").size, dtype=np.int64)

    def suspect_scores(self, oracle, reports, suspect, device):
        return np.isin(check_values(reports, oracle.d, "reports"), suspect).astype(np.int64)


@register_form("unary")
class UnaryReports(ReportForm):
    """Packed bits (OUE, SUE): MGA sets every target and l = ``padding_ones`` uniform other bits
    (s̄ = r); APA draws a genuine-looking size (:mod:`.apa`)."""

    def mga_reports(self, oracle, targets, others, m, gen, candidates, device):
        bits = np.zeros((m, oracle.d), dtype=bool)
        bits[:, targets] = True
        pad = _uniform_subsets(gen, others, m, min(padding_ones(oracle, targets.size), others.size))
        bits[np.arange(m)[:, None], pad] = True
        return np.packbits(bits, axis=1)

    def mga_counts(self, oracle, targets, others, m, gen, candidates):
        out = np.zeros(oracle.d, dtype=np.int64)
        out[targets] = m
        out[others] = _subset_sums(gen, others.size, min(padding_ones(oracle, targets.size), others.size), m)
        return out

    def mga_other_rate(self, oracle, targets):
        others = oracle.d - targets.size
        return min(padding_ones(oracle, targets.size), others) / others

    def mga_mean_support(self, oracle, targets, candidates):
        return float(targets.size)

    def apa_reports(self, oracle, targets, m, rng):
        from .crafting import unary_apa_reports
        return unary_apa_reports(oracle, targets, m, rng)

    def apa_counts(self, oracle, targets, m, rng):
        from .crafting import unary_apa_counts
        return unary_apa_counts(oracle, targets, m, rng)

    def apa_mean_support(self, oracle, r):
        pmf = oracle.support_size_pmf()
        return float(np.minimum(np.arange(pmf.size), r) @ pmf)

    def support_sizes(self, oracle, reports, device):
        r = oracle._check_reports(reports)
        return np.bitwise_count(r).sum(axis=1, dtype=np.int64)

    def suspect_scores(self, oracle, reports, suspect, device):
        r = oracle._check_reports(reports)
        c = suspect
        bits = (r[:, c >> 3] >> (7 - (c & 7)).astype(np.uint8)) & 1
        return bits.sum(axis=1, dtype=np.int64)


@register_form("hash")
class HashReports(ReportForm):
    """(key, bucket) of OLH's keyed hash into g buckets (OLH, BLH): MGA searches ``candidates`` keys
    for the bucket holding the most targets (s̄ = E[K*], :func:`._draws.best_bucket_pmf`); APA: :mod:`.apa_hashing`."""

    def mga_reports(self, oracle, targets, others, m, gen, candidates, device):
        return _olh_search(oracle, targets, m, candidates, gen, device)

    def mga_counts(self, oracle, targets, others, m, gen, candidates):
        out = np.zeros(oracle.d, dtype=np.int64)
        r = targets.size
        per_k = gen.multinomial(m, best_bucket_pmf(r, oracle.g, _check_int(candidates, "candidates", 1)))
        for size in np.flatnonzero(per_k):  # reports supporting `size` targets
            out[targets] += _subset_sums(gen, r, int(size), int(per_k[size]))
        out[others] = gen.binomial(m, 1.0 / oracle.g, size=others.size)
        return out

    def mga_mean_support(self, oracle, targets, candidates):
        r = targets.size
        pmf = best_bucket_pmf(r, oracle.g, _check_int(candidates, "candidates", 1))
        return float(np.arange(r + 1) @ pmf)

    def mga_other_rate(self, oracle, targets):
        return 1.0 / oracle.g

    def apa_reports(self, oracle, targets, m, rng):
        from .apa_hashing import apa_hash_reports
        return apa_hash_reports(oracle, targets, m, rng)

    def apa_counts(self, oracle, targets, m, rng):
        from .apa_hashing import apa_hash_counts
        return apa_hash_counts(oracle, targets, m, rng)

    def apa_mean_support(self, oracle, r):
        raise ValueError("the adaptive hashing attack has no closed-form target support; simulate it")

    def support_sizes(self, oracle, reports, device):
        s, y = oracle._check_reports(reports)
        if report_device(device, s.size * oracle.d) == "cpu":
            return kernels.hash_row_counts(s, y, np.arange(oracle.d, dtype=np.int64), oracle.g, "cpu")
        return super().support_sizes(oracle, reports, device)

    def suspect_scores(self, oracle, reports, suspect, device):
        s, y = oracle._check_reports(reports)
        if report_device(device, s.size * suspect.size) == "cpu":
            return kernels.hash_row_counts(s, y, suspect, oracle.g, "cpu")
        out = np.zeros(s.size, dtype=np.int64)
        for v in suspect:
            out += oracle.hash(s, v) == y
        return out


@register_form("hadamard")
class HadamardReports(ReportForm):
    """HR's outputs: MGA reports a uniform output among those whose set holds the most targets."""

    def mga_reports(self, oracle, targets, others, m, gen, candidates, device):
        best, _ = hr_best_outputs(oracle, targets)
        return gen.choice(best, size=m)

    def mga_counts(self, oracle, targets, others, m, gen, candidates):
        best, _ = hr_best_outputs(oracle, targets)
        hist = gen.multinomial(m, np.full(best.size, 1.0 / best.size))
        return hist @ oracle.support_matrix(best).astype(np.int64)

    def mga_mean_support(self, oracle, targets, candidates):
        return float(hr_best_outputs(oracle, targets)[1])


@register_form("subset")
class SubsetReports(ReportForm):
    """k-subsets (SS): MGA reports k uniform targets (r ≥ k), or every target and k − r uniform others
    (s̄ = min(r, k))."""

    def mga_reports(self, oracle, targets, others, m, gen, candidates, device):
        k, r = oracle.k, targets.size
        if r >= k:
            return _uniform_subsets(gen, targets, m, k)
        return np.hstack([np.broadcast_to(targets, (m, r)), _uniform_subsets(gen, others, m, k - r)])

    def mga_counts(self, oracle, targets, others, m, gen, candidates):
        out = np.zeros(oracle.d, dtype=np.int64)
        k, r = oracle.k, targets.size
        if r >= k:
            out[targets] = _subset_sums(gen, r, k, m)
        else:
            out[targets] = m
            out[others] = _subset_sums(gen, others.size, k - r, m)
        return out

    def mga_mean_support(self, oracle, targets, candidates):
        return float(min(targets.size, oracle.k))

    def mga_other_rate(self, oracle, targets):
        return max(oracle.k - targets.size, 0) / (oracle.d - targets.size)
