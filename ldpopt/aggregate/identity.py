"""Shard identity: what lets aggregation refuse to count the same reports twice.

Notes: docs/notes/devices.md, "ldpopt.aggregate.identity"."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field

__all__ = [
    "IDENTITY_KEY",
    "AlreadyHeldError",
    "ContentDigest",
    "DuplicateShardError",
    "ShardIdentity",
    "check_distinct",
    "check_not_held",
    "merge_rule",
    "new_run_id",
    "same_reports",
]

#: the Parquet key-value metadata key of a shard's identity
IDENTITY_KEY = b"ldpopt.identity"
_TAG = b"ldpopt.content-digest/1\n"


class DuplicateShardError(ValueError):
    """The same reports offered twice: two shards, or a shard and a partial already holding it.

    A ``ValueError`` whose message names both shards (:class:`ShardIdentity.describe`) and why they
    hold the same reports (same run and part, or same content digest).

    Examples
    --------
    >>> from ldpopt.aggregate import DuplicateShardError, ShardIdentity
    >>> from ldpopt.aggregate.identity import check_distinct
    >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
    >>> try:
    ...     check_distinct([sid, sid])
    ... except DuplicateShardError as exc:
    ...     print(str(exc)[:60])
    the shard of run r1, part 0 and the shard of run r1, part 0
    """


class AlreadyHeldError(DuplicateShardError):
    """A shard being added to a partial that already holds its reports (:func:`check_not_held`).

    A :class:`DuplicateShardError`; the message names the shard and the partial holding it.

    Examples
    --------
    >>> from ldpopt.aggregate import AlreadyHeldError, ShardIdentity
    >>> from ldpopt.aggregate.identity import check_not_held
    >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
    >>> try:
    ...     check_not_held([sid], [sid])
    ... except AlreadyHeldError as exc:
    ...     print(str(exc)[:60])
    the partial already holds the reports of the shard of run r1
    """


def new_run_id() -> str:
    """A fresh run id (``uuid4().hex``)."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class ShardIdentity:
    """What makes a shard's reports themselves (module notes). ``run`` and ``part`` are None for a
    shard that recorded no identity (its digest computed on read); ``file``: where it was read (not
    part of the identity).

    Parameters
    ----------
    digest : str
        The content digest, 64 lowercase hex digits (SHA-256, :class:`ContentDigest`).
    n : int
        The shard's number of reports, ``>= 0``.
    run : str, optional
        The id of the run that wrote the shard; given together with ``part``.
    part : int, optional
        The shard's position in its run, ``>= 0``.
    file : str, optional
        Where the shard was read; not compared.

    Raises
    ------
    ValueError
        A field out of range, or only one of ``run`` and ``part`` given.

    Examples
    --------
    >>> from ldpopt.aggregate import ShardIdentity
    >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
    >>> sid == ShardIdentity("ab" * 32, n=30, run="r1", part=0, file="copy.parquet")
    True
    """

    digest: str
    n: int
    run: str | None = None
    part: int | None = None
    file: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.digest, str) and len(self.digest) == 64
                and all(c in "0123456789abcdef" for c in self.digest)):
            raise ValueError(f"shard identity: digest must be 64 lowercase hex digits, got {self.digest!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 0:
            raise ValueError(f"shard identity: n must be an integer >= 0, got {self.n!r}")
        if (self.run is None) != (self.part is None):
            raise ValueError("shard identity: run and part must be given together")
        if self.run is not None and not (isinstance(self.run, str) and self.run):
            raise ValueError(f"shard identity: run must be a non-empty string, got {self.run!r}")
        if self.part is not None and (isinstance(self.part, bool) or not isinstance(self.part, int) or self.part < 0):
            raise ValueError(f"shard identity: part must be an integer >= 0, got {self.part!r}")

    def to_dict(self) -> dict:
        """The identity as a JSON-ready dict: ``digest`` and ``n``, ``run`` and ``part`` when recorded,
        ``file`` when known.

        Returns
        -------
        dict
            The fields set; :meth:`from_dict` reads it back.

        Examples
        --------
        >>> from ldpopt.aggregate import ShardIdentity
        >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
        >>> sid.to_dict()["run"], sid.to_dict()["part"]
        ('r1', 0)
        """
        doc = {"digest": self.digest, "n": self.n}
        if self.run is not None:
            doc.update(run=self.run, part=self.part)
        if self.file is not None:
            doc["file"] = self.file
        return doc

    @classmethod
    def from_dict(cls, doc, file: str | None = None) -> ShardIdentity:
        """From :meth:`to_dict`'s form (``file``: overrides the recorded one).

        Parameters
        ----------
        doc : dict
            With ``digest`` and ``n``; ``run``, ``part`` and ``file`` optional.
        file : str, optional
            Where the shard was read; replaces ``doc["file"]``.

        Returns
        -------
        ShardIdentity

        Raises
        ------
        ValueError
            ``doc`` is not a dict with ``digest`` and ``n``, or a field is out of range.

        Examples
        --------
        >>> from ldpopt.aggregate import ShardIdentity
        >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
        >>> ShardIdentity.from_dict(sid.to_dict()) == sid
        True
        """
        if not isinstance(doc, dict) or "digest" not in doc or "n" not in doc:
            raise ValueError(f"shard identity must be an object with digest and n, got {doc!r}")
        return cls(doc["digest"], doc["n"], doc.get("run"), doc.get("part"), file or doc.get("file"))

    def metadata(self) -> dict:
        """The shard's key-value metadata entry (``file`` is not stored in the shard).

        Returns
        -------
        dict of bytes to bytes
            ``{IDENTITY_KEY: JSON of the identity}``, for the Parquet footer.

        Examples
        --------
        >>> from ldpopt.aggregate import ShardIdentity
        >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
        >>> list(sid.metadata())
        [b'ldpopt.identity']
        """
        doc = {k: v for k, v in self.to_dict().items() if k != "file"}
        return {IDENTITY_KEY: json.dumps(doc, sort_keys=True).encode()}

    def describe(self) -> str:
        """The file it was read from, else its run and part, else its digest: how errors name it.

        Returns
        -------
        str

        Examples
        --------
        >>> from ldpopt.aggregate import ShardIdentity
        >>> sid = ShardIdentity("ab" * 32, n=30, run="r1", part=0)
        >>> sid.describe()
        'the shard of run r1, part 0'
        """
        if self.file is not None:
            return self.file
        return f"the shard of run {self.run}, part {self.part}" if self.run else f"the shard of digest {self.digest}"


def _value_bytes(arr, name: str):
    """The values of one Arrow array (a chunk) as bytes, row after row, zero-copy."""
    import pyarrow as pa

    if arr.null_count:
        raise ValueError(f"column {name!r} holds {arr.null_count} null(s); every row must be a report")
    if pa.types.is_fixed_size_list(arr.type):
        return _value_bytes(arr.flatten(), name)  # flatten: the child values of these rows only
    try:
        width = arr.type.byte_width
    except ValueError:
        width = 0
    if width < 1 or arr.type.bit_width != 8 * width:
        raise ValueError(f"column {name!r}: type {arr.type} has no fixed-width values to digest")
    return memoryview(arr.buffers()[1])[arr.offset * width:(arr.offset + len(arr)) * width]


def _type_tag(t) -> str:
    """A column type as text, without the names Parquet may change (a list's child field name)."""
    import pyarrow as pa

    if pa.types.is_fixed_size_list(t):
        return f"fixed_size_list<{_type_tag(t.value_type)}>[{t.list_size}]"
    return str(t)


class ContentDigest:
    """The content digest of a shard's report columns (module notes), fed a record batch or
    table at a time in row order: ``update(batch)``; ``hexdigest()``."""

    def __init__(self, schema) -> None:
        self._columns = [(f.name, _type_tag(f.type)) for f in schema]
        self._hashers = [hashlib.sha256() for _ in self._columns]
        self.n = 0

    def update(self, data) -> ContentDigest:
        """Add the rows of ``data`` (a pyarrow RecordBatch or Table with the schema's columns)."""
        for (name, _), h in zip(self._columns, self._hashers):
            col = data.column(name)
            for chunk in getattr(col, "chunks", [col]):
                h.update(_value_bytes(chunk, name))
        self.n += data.num_rows
        return self

    def hexdigest(self) -> str:
        top = hashlib.sha256(_TAG)
        for (name, typ), h in zip(self._columns, self._hashers):
            top.update(f"{name}\0{typ}\0".encode())
            top.update(h.digest())
        top.update(int(self.n).to_bytes(8, "little"))
        return top.hexdigest()

    def identity(self, run: str | None = None, part: int | None = None, file: str | None = None) -> ShardIdentity:
        return ShardIdentity(self.hexdigest(), self.n, run, part, file)


def same_reports(a: ShardIdentity, b: ShardIdentity) -> str | None:
    """Why ``a`` and ``b`` hold the same reports (module notes), or None if they do not."""
    if a.run is not None and a.run == b.run:
        return f"same run {a.run} and part {a.part}" if a.part == b.part else None
    if a.digest == b.digest:
        return f"same content digest {a.digest[:16]}…"
    return None


class _Index:
    """Shard identities looked up by (run, part) and by digest, for :func:`same_reports` in O(1)."""

    def __init__(self, items=()) -> None:
        self.by_slot: dict = {}
        self.by_digest: dict = {}
        for s in items:
            self.add(s)

    def add(self, s: ShardIdentity) -> None:
        if s.run is not None:
            self.by_slot.setdefault((s.run, s.part), s)
        self.by_digest.setdefault(s.digest, []).append(s)

    def match(self, s: ShardIdentity):
        """(an indexed identity holding the same reports as ``s``, why), or None."""
        if s.run is not None and (s.run, s.part) in self.by_slot:
            t = self.by_slot[(s.run, s.part)]
            return t, same_reports(t, s)
        for t in self.by_digest.get(s.digest, ()):
            why = same_reports(t, s)
            if why:
                return t, why
        return None


def _first_match(index: _Index, items, grow: bool):
    """(the first of ``items`` holding the same reports as an indexed identity, that identity, why),
    or None; ``grow``: each item is indexed after it is looked up (repeats among ``items`` too)."""
    for s in items:
        hit = index.match(s)
        if hit:
            return (s, *hit)
        if grow:
            index.add(s)
    return None


def check_distinct(identities) -> None:
    """Raise :class:`DuplicateShardError` naming the first two of ``identities`` that hold the same
    reports (:func:`same_reports`)."""
    hit = _first_match(_Index(), identities, grow=True)
    if hit:
        s, t, why = hit
        raise DuplicateShardError(f"{t.describe()} and {s.describe()} hold the same reports ({why}): each "
                                  f"report may be counted once; remove one of them")


def check_not_held(held, adding, holder: str = "the partial") -> None:
    """Raise :class:`AlreadyHeldError` if any of the identities ``adding`` is among ``held`` (the
    shards a partial holds), naming the shard and ``holder``."""
    hit = _first_match(_Index(held), adding, grow=False)
    if hit:
        s, t, why = hit
        raise AlreadyHeldError(f"{holder} already holds the reports of {s.describe()} ({why} as its "
                               f"{t.describe()}): each report may be counted once")


def merge_rule(a_shards, a_n: int, b_shards, b_n: int) -> str:
    """How two partials with these shard identities and report counts merge: ``"add"`` (no shard in
    common, or either records none), ``"left"`` (a already holds every report of b: b's recorded shards
    are all in a and account for all b_n reports), ``"right"`` (the converse); a partial overlap
    raises :class:`DuplicateShardError` naming a shard they share."""
    if not a_shards or not b_shards:
        return "add"
    ia, ib = _Index(a_shards), _Index(b_shards)
    shared = [s for s in b_shards if ia.match(s)]
    if not shared:
        return "add"
    if len(shared) == len(b_shards) and sum(s.n for s in b_shards) == b_n:
        return "left"
    if all(ib.match(s) for s in a_shards) and sum(s.n for s in a_shards) == a_n:
        return "right"
    raise DuplicateShardError(f"cannot merge partial aggregates: both hold the reports of {shared[0].describe()}, "
                              f"and neither holds all of the other's: the result would count them twice")
