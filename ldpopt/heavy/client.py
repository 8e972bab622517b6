"""A heavy-hitter protocol's users as they run on the candidate sets a run published: each user's
group (PEM's round, TreeHist's level, SFP's fragment position) drawn uniformly, her prefix or fragment
reported through that round's oracle, and (TreeHist, SFP) her word through the word oracle — every
field the server receives, for the auditor.

Notes: docs/notes/sketches.md, "ldpopt.heavy.client"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator
from ..oracles.base import FrequencyOracle
from ..oracles.routed import RoutedReports, routed, support_score
from .result import HeavyHitters
from .rounds import OracleSpec, make_oracle
from .sfp import _assemble, fragment_values
from .strings import prefixes

__all__ = ["HeavyClient", "Round"]

#: report cells (users × round domain) per chunk of one round's reports (bounds the support matrix)
CHUNK_CELLS = 1 << 22


@dataclass(frozen=True)
class Round:
    """One channel of a user's report: the oracle over ``candidates`` (then "other" unless ``full``)
    at ``epsilon``, fed ``value(codes)`` (the prefix, fragment or word of each user's code)."""

    epsilon: float
    candidates: np.ndarray
    full: bool
    value: Callable[[np.ndarray], np.ndarray]
    oracle: FrequencyOracle

    def index(self, codes) -> np.ndarray:
        """Each code's position among the candidates (the oracle's input); m for "other".

        Parameters
        ----------
        codes : array_like of int

        Returns
        -------
        ndarray of int64

        Raises
        ------
        ValueError
            If the round is full and a code lies outside its candidates.
        """
        v = self.value(np.asarray(codes, dtype=np.int64))
        m = self.candidates.size
        pos = np.minimum(np.searchsorted(self.candidates, v), m - 1)
        hit = self.candidates[pos] == v
        if self.full and not np.all(hit):
            raise ValueError("a code lies outside a full round's candidates")
        return np.where(hit, pos, m)


class HeavyClient:
    """The users of a heavy-hitter protocol on the published candidate sets of ``found``.

    Parameters
    ----------
    found : HeavyHitters
        A run of :func:`~ldpopt.heavy.pem`, :func:`~ldpopt.heavy.treehist` or :func:`~ldpopt.heavy.sfp`:
        its levels' candidate sets are the public state the users report against.
    oracle, word_oracle : str or callable
        The channels (as the protocol took them; ``word_oracle`` defaults to ``oracle``).

    Attributes
    ----------
    epsilon : float
        Each user's ε over everything she sends (PEM: ε in one round; TreeHist and SFP: ε/2 in her
        group's round plus ε/2 for her word).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, pem
    >>> from ldpopt.heavy.client import HeavyClient
    >>> codes = encode(["hi", "ok", "yo", "no"], nbytes=2)
    >>> found = pem(codes, np.array([4000, 3000, 1000, 800]), total_bits=16, epsilon=4.0, k=2, rng=0)
    >>> client = HeavyClient(found)
    >>> reps = client(np.repeat(codes[:2], 3), rng=1)
    >>> client.epsilon, len(client.rounds), reps[0].shape
    (4.0, 3, (6,))
    """

    def __init__(self, found: HeavyHitters, oracle: OracleSpec = "olh", word_oracle: OracleSpec | None = None):
        if not isinstance(found, HeavyHitters) or found.protocol not in ("pem", "treehist", "sfp"):
            raise ValueError("found must be the HeavyHitters of a pem, treehist or sfp run")
        tb, eps = int(found.total_bits), float(found.epsilon)
        self.protocol, self.total_bits = found.protocol, tb
        half = eps if found.protocol == "pem" else eps / 2

        def chan(e, cand, full, value, spec):
            cand = np.asarray(cand, dtype=np.int64)
            return Round(e, cand, bool(full), value, make_oracle(spec, e, max(cand.size + (0 if full else 1), 2)))

        if found.protocol == "sfp":
            r = int(found.params["fragment_bits"])
            self.rounds = [chan(half, lv.candidates, True,
                                (lambda c, p=p: fragment_values(c, tb, r, p)), oracle)
                           for p, lv in enumerate(found.levels)]
            words = _assemble([lv.candidates[lv.kept] for lv in found.levels], r, 1 << 30)
        else:
            self.rounds = [chan(half, lv.candidates, lv.full, (lambda c, b=lv.bits: prefixes(c, tb, b)), oracle)
                           for lv in found.levels]
            last = found.levels[-1]
            words = last.candidates[last.kept] if last.bits == tb else np.zeros(0, np.int64)
        self.word = None
        if found.protocol != "pem" and words.size:
            self.word = chan(half, np.sort(words), False, lambda c: c, word_oracle or oracle)
        self.epsilon = eps

    @staticmethod
    def _send(ch: int, rnd: Round, users: np.ndarray, codes: np.ndarray, gen, parts: list, made: list):
        idx = rnd.index(codes[users])
        step = max(1, CHUNK_CELLS // rnd.oracle.d)
        for lo in range(0, users.size, step):  # memory chunks of users, not a loop over users
            parts.append((ch, users[lo:lo + step], rnd.oracle, rnd.oracle.perturb(idx[lo:lo + step], gen)))
            made.append(rnd)

    def __call__(self, codes, rng) -> RoutedReports:
        """The reports of users holding ``codes`` (one ``total_bits``-bit code each).

        Parameters
        ----------
        codes : array_like of int, shape (m,)
        rng : seed, Generator or "secure"

        Returns
        -------
        RoutedReports
            (group, the group's round report fields, then the word report fields when there is one).
        """
        c = np.asarray(codes, dtype=np.int64).reshape(-1)
        gen = as_generator(rng)
        g = gen.integers(0, len(self.rounds), size=c.size)
        parts: list = []
        made: list[Round] = []
        for i, rnd in enumerate(self.rounds):  # the rounds (a handful), not users
            self._send(0, rnd, np.flatnonzero(g == i), c, gen, parts, made)
        if self.word is not None:
            self._send(1, self.word, np.arange(c.size), c, gen, parts, made)
        out = routed(g, parts)
        out.rounds = made  # type: ignore[attr-defined]
        return out

    def score(self, reports: RoutedReports, x: int, x2: int) -> np.ndarray:
        """Σ over a user's reports of S(y)[x] − S(y)[x′] (each oracle's support of the candidate
        holding x, x′; :func:`~ldpopt.oracles.routed.support_score`): the log likelihood ratio up to
        the factor ln(p/q), every channel at one ε.

        Parameters
        ----------
        reports : RoutedReports
            What this client returned.
        x, x2 : int
            The two codes.

        Returns
        -------
        ndarray (m,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.heavy import encode, treehist
        >>> from ldpopt.heavy.client import HeavyClient
        >>> codes = encode(["hi", "ok", "yo", "no"], nbytes=2)
        >>> found = treehist(codes, np.array([4000, 3000, 1000, 800]), total_bits=16, epsilon=4.0, step_bits=4,
        ...                  k=2, rng=0)
        >>> client = HeavyClient(found)
        >>> bool(client.score(client(np.repeat(codes[0], 2000), rng=1), codes[0], codes[1]).mean() > 0)
        True
        """
        rounds = reports.rounds  # type: ignore[attr-defined]
        return support_score(reports, lambda j: (int(rounds[j].index([x])[0]), int(rounds[j].index([x2])[0])))

    def audit_spec(self, pairs) -> dict:
        """Keyword arguments of :func:`ldpopt.audit.audit_client` for these users.

        Parameters
        ----------
        pairs : list of (int, int)
            Neighbouring users' codes.

        Returns
        -------
        dict
            ``client``, ``stated`` (:attr:`epsilon`), ``pairs``, ``model_score``, ``name``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.heavy import encode, sfp
        >>> from ldpopt.heavy.client import HeavyClient
        >>> codes = encode(["hi", "ok", "yo", "no"], nbytes=2)
        >>> found = sfp(codes, np.array([4000, 3000, 1000, 800]), total_bits=16, epsilon=4.0, k=2, rng=0)
        >>> spec = HeavyClient(found).audit_spec([(codes[0], codes[1])])
        >>> spec["stated"], spec["name"]
        (4.0, 'sfp (olh)')
        """
        return {"client": self, "stated": self.epsilon, "pairs": [(int(a), int(b)) for a, b in pairs],
                "model_score": lambda rounds, x, x2: self.score(rounds[0], int(x), int(x2)),
                "name": f"{self.protocol} ({self.rounds[0].oracle.name})"}
