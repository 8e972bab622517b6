"""Partial aggregates: support counts of a shard of reports, as a small versioned monoid.

Notes: docs/notes/devices.md, "ldpopt.aggregate.partial"."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import oracles
from ..estimate import Estimate
from ..oracles.base import FrequencyOracle
from .identity import ShardIdentity, check_distinct, merge_rule

__all__ = ["FORMAT_VERSION", "MergeError", "Partial", "check_labels", "count_scale", "report_count"]

#: version of the serialised form; a partial of another version is refused, never guessed at
FORMAT_VERSION = 1
_KIND = "ldpopt.partial"


class MergeError(ValueError):
    """Two partials that cannot be added (different oracle, ε, d, parameter, labels or format version).

    A ``ValueError`` whose message names the first field on which they differ.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.aggregate import MergeError, Partial
    >>> a = Partial.empty(oracles.get("grr", epsilon=2.0, d=4))
    >>> try:
    ...     a.merge(Partial.empty(oracles.get("grr", epsilon=1.0, d=4)))
    ... except MergeError as exc:
    ...     print(exc)
    cannot merge partial aggregates: epsilon differs (2.0 vs 1.0)
    """


def check_labels(labels, d: int) -> tuple | None:
    """``labels`` as a tuple of d distinct non-empty strings, or None (no labels, or exactly the
    positions "0".."d-1"); anything else is a ValueError naming ``labels``."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise ValueError(f"labels must be a sequence of d = {d} strings, got {type(labels).__name__}")
    labels = tuple(labels)
    if len(labels) != d:
        raise ValueError(f"labels must hold d = {d} strings, got {len(labels)}")
    for i, lab in enumerate(labels):
        if not isinstance(lab, str) or not lab:
            raise ValueError(f"labels must be non-empty strings; entry {i} is {lab!r}")
    if len(set(labels)) != d:
        seen: dict = {}
        i = next(i for i, lab in enumerate(labels) if seen.setdefault(lab, i) != i)
        raise ValueError(f"labels must be distinct; entry {i} ({labels[i]!r}) repeats entry {seen[labels[i]]}")
    if labels == tuple(map(str, range(d))):
        return None
    return labels


def _check_shards(shards, n: int) -> tuple:
    """``shards`` as a tuple of distinct ShardIdentity (dicts converted), sorted by (run, part, digest),
    whose reports do not sum above ``n``."""
    if isinstance(shards, (str, bytes, dict)) or not hasattr(shards, "__iter__"):
        raise ValueError(f"shards must be a sequence of shard identities, got {type(shards).__name__}")
    items = tuple(s if isinstance(s, ShardIdentity) else ShardIdentity.from_dict(s) for s in shards)
    check_distinct(items)
    held = sum(s.n for s in items)
    if held > n:
        raise ValueError(f"shards: the recorded shards hold {held} reports, more than n = {n}")
    return tuple(sorted(items, key=lambda s: (s.run or "", -1 if s.part is None else s.part, s.digest)))


def _labels_diff(a, b) -> str:
    if a is None or b is None:
        return f"{'none' if a is None else f'{len(a)} labels'} vs {'none' if b is None else f'{len(b)} labels'}"
    i = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    return f"position {i}: {a[i]!r} vs {b[i]!r}"


def _structural_params(oracle: FrequencyOracle) -> dict:
    """The oracle's structural parameters (``oracle.structural_params()``: the parameters that change
    what a support count means beyond ε and d), as JSON scalars (ints stay ints, floats stay floats)."""
    items = oracle.structural_params()
    return {k: int(v) if isinstance(v, (int, np.integer)) else v if isinstance(v, str) else float(v)
            for k, v in items.items()}


def count_scale(oracle: FrequencyOracle) -> int:
    """What a partial multiplies the support counts by to store them as integers: RAPPOR's h (its
    counts are multiples of 1/h, module notes), 1 for every other oracle (``oracle.count_scale``)."""
    return int(oracle.count_scale)


def report_count(reports) -> int:
    """How many reports ``reports`` holds: one row each, or the rows of the first member of a
    tuple report (CMS's (j, bits), RAPPOR's (cohort, bits))."""
    return len(reports[0]) if isinstance(reports, tuple) else len(reports)


@dataclass(frozen=True, eq=False)
class Partial:
    """Support counts and report count of a shard of reports from one oracle configuration.

    Build with :meth:`empty` or :meth:`from_reports` (or :meth:`from_counts` for counts computed
    elsewhere, e.g. by a peer-format reader); combine with :meth:`merge` (or ``a + b``); finish with
    :meth:`finalize`. Immutable; ``counts`` is a read-only int64 array of length d.

    Parameters
    ----------
    oracle : str
        The oracle's registry name (:func:`ldpopt.oracles.get`).
    epsilon : float
        The privacy budget ε.
    d : int
        The domain size.
    params : dict, optional
        The oracle's structural parameters (g for OLH, k for SS, the sketch parameters; a given
        table's ``family_sha1``).
    n : int, default 0
        Number of reports counted, ``>= 0``.
    counts : array_like of int, shape (d,), optional
        Support counts (times ``count_scale`` for RAPPOR) in ``[0, n·scale]``; default zeros.
    version : int, default FORMAT_VERSION
        Serialisation format version; another one is refused.
    labels : sequence of str, optional
        d distinct non-empty value labels in position order.
    shards : sequence of ShardIdentity or dict, optional
        The shards whose reports the partial holds.

    Raises
    ------
    MergeError
        ``version`` is not :data:`FORMAT_VERSION`.
    ValueError
        An unknown oracle or parameters that do not fit it, ``n`` negative, ``counts`` of the wrong
        shape, not integers or out of range, bad ``labels``, or ``shards`` holding more than n
        reports or the same reports twice.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.aggregate import Partial
    >>> grr = oracles.get("grr", epsilon=2.0, d=4)
    >>> reports = grr.perturb(np.array([0, 0, 1, 2, 3, 0] * 10), rng=0)
    >>> a, b = Partial.from_reports(grr, reports[:30]), Partial.from_reports(grr, reports[30:])
    >>> total = a + b
    >>> total, total.counts
    (Partial(oracle='grr', epsilon=2, d=4, n=60), array([30,  9, 11, 10]))
    >>> total.finalize().f_tilde.round(3)
    array([0.657, 0.087, 0.142, 0.114])
    """

    oracle: str
    epsilon: float
    d: int
    params: dict = field(default_factory=dict)
    n: int = 0
    counts: np.ndarray = None  # type: ignore[assignment]
    version: int = FORMAT_VERSION
    labels: tuple | None = None
    shards: tuple = ()

    def __post_init__(self) -> None:
        orc = self._template()  # validates name, ε, d and parameters
        if self.version != FORMAT_VERSION:
            raise MergeError(f"version: partial has format version {self.version!r}, this ldpopt reads "
                             f"version {FORMAT_VERSION}")
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 0:
            raise ValueError(f"n must be an integer >= 0, got {self.n!r}")
        c = np.zeros(self.d, np.int64) if self.counts is None else np.asarray(self.counts)
        if c.shape != (self.d,):
            raise ValueError(f"counts must have shape ({self.d},) for d = {self.d}, got {c.shape}")
        if c.dtype.kind not in "iu":
            raise ValueError(f"counts must be integers, got dtype {c.dtype}")
        c = c.astype(np.int64, copy=True)
        top = self.n * count_scale(orc)
        if np.any(c < 0) or np.any(c > top):
            bad = int(np.flatnonzero((c < 0) | (c > top))[0])
            raise ValueError(f"counts must lie in [0, {'n' if top == self.n else 'h·n'} = {top}]; entry {bad} "
                             f"is {int(c[bad])}")
        c.setflags(write=False)
        object.__setattr__(self, "counts", c)
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "epsilon", orc.epsilon)
        object.__setattr__(self, "oracle", orc.name)
        params = _structural_params(orc)
        digest = (self.params or {}).get("family_sha1")
        if digest is not None:  # a given-table family: its digest stands for hash_seed
            if not (isinstance(digest, str) and len(digest) == 40 and all(c in "0123456789abcdef" for c in digest)):
                raise ValueError(f"params: family_sha1 must be 40 lowercase hex digits, got {digest!r}")
            params.pop("hash_seed", None)
            params["family_sha1"] = digest
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "labels", check_labels(self.labels, self.d))
        object.__setattr__(self, "shards", _check_shards(self.shards, self.n))

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def empty(cls, oracle: FrequencyOracle, labels=None) -> Partial:
        """The identity of :meth:`merge` for ``oracle``'s configuration (n = 0, counts 0).

        Parameters
        ----------
        oracle : FrequencyOracle
            The oracle whose configuration (name, ε, d, parameters) the partial carries.
        labels : sequence of str, optional
            d distinct value labels.

        Returns
        -------
        Partial

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> Partial.empty(oracles.get("oue", epsilon=1.0, d=8))
        Partial(oracle='oue', epsilon=1, d=8, n=0)
        """
        return cls(oracle.name, oracle.epsilon, oracle.d, _structural_params(oracle), labels=labels)

    @classmethod
    def from_counts(cls, oracle: FrequencyOracle, counts, n: int, labels=None) -> Partial:
        """A partial from support counts already aggregated over ``n`` reports (``oracle.aggregate``'s
        counts; RAPPOR's multiples of 1/h are stored as h·c, :func:`count_scale`).

        Parameters
        ----------
        oracle : FrequencyOracle
            The oracle the counts belong to.
        counts : array_like, shape (d,)
            Support counts, in ``[0, n]``.
        n : int
            Number of reports they count.
        labels : sequence of str, optional
            d distinct value labels.

        Returns
        -------
        Partial

        Raises
        ------
        ValueError
            Counts of the wrong shape or out of range, or (RAPPOR) not multiples of 1/h.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> p = Partial.from_counts(oracles.get("grr", epsilon=2.0, d=4), [3, 1, 0, 0], n=4)
        >>> p.n, p.counts
        (4, array([3, 1, 0, 0]))
        """
        c = np.asarray(counts)
        scale = count_scale(oracle)
        if scale != 1:
            scaled = np.rint(c * scale)
            if not np.allclose(scaled, c * scale, rtol=0, atol=1e-6):
                raise ValueError(f"counts must be multiples of 1/{scale} for {oracle.name} with num_hashes = {scale}")
            c = scaled.astype(np.int64)
        return cls(oracle.name, oracle.epsilon, oracle.d, _structural_params(oracle), n, c, labels=labels)

    def with_labels(self, labels) -> Partial:
        """The same counts with value ``labels`` (position order; None: the positions).

        Parameters
        ----------
        labels : sequence of str or None
            d distinct non-empty strings; labels equal to "0".."d-1" are stored as none.

        Returns
        -------
        Partial

        Raises
        ------
        ValueError
            ``labels`` is not d distinct non-empty strings.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> p = Partial.from_counts(oracles.get("grr", epsilon=2.0, d=3), [3, 1, 0], n=4)
        >>> p.with_labels(["red", "green", "blue"]).labels
        ('red', 'green', 'blue')
        """
        return Partial(self.oracle, self.epsilon, self.d, dict(self.params), self.n, self.counts, self.version,
                       labels, self.shards)

    def with_shards(self, shards) -> Partial:
        """The same counts recorded as holding the reports of ``shards`` (:class:`~.identity.ShardIdentity`
        items or their dicts; their n must not sum above this partial's n).

        Parameters
        ----------
        shards : iterable of ShardIdentity or dict
            The shards' identities.

        Returns
        -------
        Partial

        Raises
        ------
        ValueError
            The shards hold more than n reports, or a shard identity is malformed.
        DuplicateShardError
            Two of ``shards`` hold the same reports.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial, ShardIdentity
        >>> p = Partial.from_counts(oracles.get("grr", epsilon=2.0, d=3), [3, 1, 0], n=4)
        >>> sid = ShardIdentity("ab" * 32, n=4, run="r1", part=0)
        >>> held = p.with_shards([sid])
        >>> held.merge(held) is held  # merging the same shards again is idempotent
        True
        """
        return Partial(self.oracle, self.epsilon, self.d, dict(self.params), self.n, self.counts, self.version,
                       self.labels, tuple(shards))

    @classmethod
    def from_reports(cls, oracle: FrequencyOracle, reports, device=None) -> Partial:
        """Aggregate one shard of ``reports`` (in the format ``oracle.perturb`` returns) with
        ``oracle.aggregate`` on ``device`` (:meth:`FrequencyOracle.aggregate`; None: its default);
        an empty shard gives the empty partial.

        Parameters
        ----------
        oracle : FrequencyOracle
            The oracle that produced the reports.
        reports : ndarray or tuple of ndarray
            The reports, one row each.
        device : str, optional
            Where to aggregate (``"cpu"``, ``"cuda"``); None: the oracle's default.

        Returns
        -------
        Partial

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> grr = oracles.get("grr", epsilon=2.0, d=4)
        >>> reports = grr.perturb(np.array([0, 0, 1, 2, 3, 0] * 10), rng=0)
        >>> Partial.from_reports(grr, reports).counts
        array([30,  9, 11, 10])
        """
        m = report_count(reports)
        if m == 0:
            return cls.empty(oracle)
        counts = oracle.aggregate(reports) if device is None else oracle.aggregate(reports, device=device)
        return cls.from_counts(oracle, counts, m)

    # -- the monoid -----------------------------------------------------------------------------
    def key(self) -> dict[str, Any]:
        """What two partials must share to be merged: version, oracle, ε, d, parameters, labels.

        Returns
        -------
        dict
            Field name to value; parameters as ``"params.<name>"``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> Partial.empty(oracles.get("olh", epsilon=1.0, d=8)).key()["params.g"]
        4
        """
        return {"version": self.version, "oracle": self.oracle, "epsilon": self.epsilon, "d": self.d,
                **{f"params.{k}": v for k, v in sorted(self.params.items())}, "labels": self.labels}

    def check_compatible(self, other: Partial) -> None:
        """Raise :class:`MergeError` naming the first field on which the two partials differ.

        Parameters
        ----------
        other : Partial
            The partial to compare with.

        Raises
        ------
        TypeError
            ``other`` is not a Partial.
        MergeError
            A field of :meth:`key` differs.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> a = Partial.empty(oracles.get("grr", epsilon=1.0, d=4))
        >>> a.check_compatible(Partial.empty(oracles.get("grr", epsilon=1.0, d=4))) is None
        True
        """
        if not isinstance(other, Partial):
            raise TypeError(f"can only merge a Partial with a Partial, got {type(other).__name__}")
        a, b = self.key(), other.key()
        first = ("version", "oracle", "epsilon", "d")
        for name in (*first, *sorted(set(a) | set(b) - {*first, "labels"}), "labels"):
            if name == "labels" and a["labels"] != b["labels"]:
                raise MergeError(f"cannot merge partial aggregates: labels differ "
                                 f"({_labels_diff(a['labels'], b['labels'])})")
            if a.get(name) != b.get(name):
                raise MergeError(f"cannot merge partial aggregates: {name} differs ({a.get(name)!r} vs "
                                 f"{b.get(name)!r})")

    def merge(self, other: Partial) -> Partial:
        """The partial of the union of both shards: counts and n added (exact integers), the recorded
        shards joined. Idempotent by identity (:func:`~.identity.merge_rule`): when one partial's
        recorded shards are all held by the other and account for all its reports, the holder is
        returned unchanged; a partial overlap raises :class:`~.identity.DuplicateShardError`.

        Parameters
        ----------
        other : Partial
            A partial of the same configuration (``a + b`` is ``a.merge(b)``).

        Returns
        -------
        Partial

        Raises
        ------
        MergeError
            The configurations differ (:meth:`check_compatible`).
        DuplicateShardError
            The two hold some, but not all, of the same shards.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> grr = oracles.get("grr", epsilon=2.0, d=4)
        >>> reports = grr.perturb(np.array([0, 0, 1, 2, 3, 0] * 10), rng=0)
        >>> a, b = Partial.from_reports(grr, reports[:30]), Partial.from_reports(grr, reports[30:])
        >>> a.merge(b) == Partial.from_reports(grr, reports)
        True
        """
        self.check_compatible(other)
        rule = merge_rule(self.shards, self.n, other.shards, other.n)
        if rule != "add":
            return self if rule == "left" else other
        return Partial(self.oracle, self.epsilon, self.d, dict(self.params), self.n + other.n,
                       self.counts + other.counts, labels=self.labels, shards=self.shards + other.shards)

    __add__ = merge

    @staticmethod
    def merge_all(partials) -> Partial:
        """Merge a non-empty iterable of partials (pairwise, as a balanced tree).

        Parameters
        ----------
        partials : iterable of Partial
            At least one, all of one configuration.

        Returns
        -------
        Partial

        Raises
        ------
        ValueError
            ``partials`` is empty.
        MergeError
            Two configurations differ.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> grr = oracles.get("grr", epsilon=2.0, d=4)
        >>> reports = grr.perturb(np.array([0, 0, 1, 2, 3, 0] * 10), rng=0)
        >>> parts = [Partial.from_reports(grr, reports[i:i + 20]) for i in range(0, 60, 20)]
        >>> Partial.merge_all(parts).n
        60
        """
        items = list(partials)
        if not items:
            raise ValueError("partials must hold at least one Partial (the empty merge has no configuration)")
        while len(items) > 1:
            nxt = [items[i].merge(items[i + 1]) for i in range(0, len(items) - 1, 2)]
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
        return items[0]

    # -- finishing ------------------------------------------------------------------------------
    def build_oracle(self, oracle: FrequencyOracle | None = None) -> FrequencyOracle:
        """The oracle this partial's counts belong to: rebuilt from the partial's parameters, or
        ``oracle`` checked to be that one (needed where the hash family was a given table).

        Parameters
        ----------
        oracle : FrequencyOracle, optional
            The oracle to check and return; None rebuilds it.

        Returns
        -------
        FrequencyOracle

        Raises
        ------
        ValueError
            ``oracle`` is not the partial's configuration, or none is given for a given-table family.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> Partial.empty(oracles.get("grr", epsilon=2.0, d=4)).build_oracle()
        GRR(epsilon=2, d=4)
        """
        if oracle is not None:
            mine = {"oracle": self.oracle, "epsilon": self.epsilon, "d": self.d, "params": dict(self.params)}
            theirs = {"oracle": oracle.name, "epsilon": oracle.epsilon, "d": oracle.d,
                      "params": _structural_params(oracle)}
            if mine != theirs:
                raise ValueError(f"oracle: {theirs} is not the partial's {mine}")
            return oracle
        if "family_sha1" in self.params:
            raise ValueError(f"this {self.oracle} partial's hash family was a given table (family_sha1 "
                             f"{self.params['family_sha1']}): pass the oracle built with it, finalize(oracle=...)")
        return self._template()

    def _template(self) -> FrequencyOracle:
        """The oracle of the partial's name, ε, d and parameters; for a given-table family, one of the
        same shape drawn from hash_seed 0 (it validates the fields and gives the count scale, never
        an estimate: :meth:`build_oracle`)."""
        params = {k: v for k, v in (self.params or {}).items() if k != "family_sha1"}
        try:
            return oracles.get(self.oracle, epsilon=self.epsilon, d=self.d, **params)
        except TypeError as exc:
            raise ValueError(f"params {self.params!r} do not fit oracle {self.oracle!r}: {exc}") from None

    def finalize(self, oracle: FrequencyOracle | None = None, **meta) -> Estimate:
        """The unbiased estimate of the merged reports (``oracle.estimate``); needs n >= 1. ``oracle``:
        the partial's oracle when it cannot be rebuilt from its parameters (:meth:`build_oracle`).

        The estimate f̃ = (c/n − q)/(p − q) of Wang et al. (arXiv §2.4), taken once on the merged total.

        Parameters
        ----------
        oracle : FrequencyOracle, optional
            See :meth:`build_oracle`.
        **meta
            Passed to ``oracle.estimate`` (kept on the Estimate).

        Returns
        -------
        Estimate
            The unbiased estimate over the d values.

        Raises
        ------
        ValueError
            The partial is empty (n = 0), or ``oracle`` does not match.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> grr = oracles.get("grr", epsilon=2.0, d=4)
        >>> reports = grr.perturb(np.array([0, 0, 1, 2, 3, 0] * 10), rng=0)
        >>> Partial.from_reports(grr, reports).finalize().f_tilde.round(3)
        array([0.657, 0.087, 0.142, 0.114])
        """
        if self.n < 1:
            raise ValueError("cannot finalize an empty partial aggregate (n = 0 reports)")
        orc = self.build_oracle(oracle)
        return orc.estimate(self.support_counts(orc), self.n, **meta)

    def support_counts(self, oracle: FrequencyOracle | None = None) -> np.ndarray:
        """The support counts as the oracle defines them: ``counts`` (int64), or ``counts / h``
        (float) for RAPPOR (:func:`count_scale`).

        Parameters
        ----------
        oracle : FrequencyOracle, optional
            See :meth:`build_oracle`.

        Returns
        -------
        ndarray, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> Partial.from_counts(oracles.get("grr", epsilon=2.0, d=3), [3, 1, 0], n=4).support_counts()
        array([3, 1, 0])
        """
        scale = count_scale(self._template() if oracle is None else self.build_oracle(oracle))
        return self.counts if scale == 1 else self.counts / scale

    def __eq__(self, other) -> bool:
        return (isinstance(other, Partial) and self.key() == other.key() and self.n == other.n
                and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]

    # -- serialisation --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The partial as one JSON-ready dict (counts as base64 little-endian int64, module notes).

        Returns
        -------
        dict
            ``kind, version, oracle, epsilon, d, params, n, counts_int64le_base64``, and ``labels``
            and ``shards`` when present.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> doc = Partial.empty(oracles.get("grr", epsilon=2.0, d=4)).to_dict()
        >>> doc["kind"], doc["n"]
        ('ldpopt.partial', 0)
        """
        doc = {"kind": _KIND, "version": self.version, "oracle": self.oracle, "epsilon": self.epsilon,
               "d": self.d, "params": dict(self.params), "n": self.n,
               "counts_int64le_base64": base64.b64encode(self.counts.astype("<i8").tobytes()).decode("ascii")}
        if self.labels is not None:
            doc["labels"] = list(self.labels)
        if self.shards:
            doc["shards"] = [s.to_dict() for s in self.shards]
        return doc

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string (keys sorted).

        Returns
        -------
        str

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> p = Partial.from_counts(oracles.get("grr", epsilon=2.0, d=3), [3, 1, 0], n=4)
        >>> Partial.from_json(p.to_json()) == p
        True
        """
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, doc: dict) -> Partial:
        """A partial from :meth:`to_dict`'s form.

        Parameters
        ----------
        doc : dict
            A serialised partial (``kind`` ``"ldpopt.partial"``).

        Returns
        -------
        Partial

        Raises
        ------
        ValueError
            Not a serialised partial, a field missing, or counts of the wrong length.
        MergeError
            Another format version.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> p = Partial.from_counts(oracles.get("grr", epsilon=2.0, d=3), [3, 1, 0], n=4)
        >>> Partial.from_dict(p.to_dict()).counts
        array([3, 1, 0])
        """
        if not isinstance(doc, dict) or doc.get("kind") != _KIND:
            raise ValueError(f"not a serialised ldpopt partial aggregate (kind must be {_KIND!r})")
        missing = [k for k in ("version", "oracle", "epsilon", "d", "params", "n", "counts_int64le_base64")
                   if k not in doc]
        if missing:
            raise ValueError(f"serialised partial aggregate lacks field(s) {missing}")
        if doc["version"] != FORMAT_VERSION:
            raise MergeError(f"version: serialised partial has format version {doc['version']!r}, this "
                             f"ldpopt reads version {FORMAT_VERSION}")
        raw = base64.b64decode(doc["counts_int64le_base64"], validate=True)
        if len(raw) != 8 * int(doc["d"]):
            raise ValueError(f"counts: {len(raw)} bytes do not hold d = {doc['d']} int64 counts")
        counts = np.frombuffer(raw, dtype="<i8").astype(np.int64)
        shards = doc.get("shards", [])
        if not isinstance(shards, list):
            raise ValueError(f"serialised partial aggregate: shards must be a list, got {type(shards).__name__}")
        return cls(doc["oracle"], doc["epsilon"], doc["d"], doc["params"], doc["n"], counts, doc["version"],
                   doc.get("labels"), tuple(ShardIdentity.from_dict(x) for x in shards))

    @classmethod
    def from_json(cls, text: str) -> Partial:
        """A partial from :meth:`to_json`'s text.

        Parameters
        ----------
        text : str
            JSON of a serialised partial.

        Returns
        -------
        Partial

        Raises
        ------
        ValueError
            Not valid JSON, or not a serialised partial (see :meth:`from_dict`).

        Examples
        --------
        >>> from ldpopt.aggregate import Partial
        >>> try:
        ...     Partial.from_json("{}")
        ... except ValueError as exc:
        ...     print(exc)
        not a serialised ldpopt partial aggregate (kind must be 'ldpopt.partial')
        """
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"serialised partial aggregate is not valid JSON: {exc}") from None
        return cls.from_dict(doc)

    def values(self) -> np.ndarray:
        """The value of each count: the labels (object array) or the positions 0..d-1 (int64).

        Returns
        -------
        ndarray, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.aggregate import Partial
        >>> p = Partial.from_counts(oracles.get("grr", epsilon=2.0, d=3), [3, 1, 0], n=4)
        >>> p.values(), p.with_labels(["a", "b", "c"]).values().tolist()
        (array([0, 1, 2]), ['a', 'b', 'c'])
        """
        return np.arange(self.d, dtype=np.int64) if self.labels is None else np.array(self.labels, dtype=object)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in self.params.items())
        return f"Partial(oracle={self.oracle!r}, epsilon={self.epsilon:g}, d={self.d}{extra}, n={self.n})"
