"""Where counts came from: the configuration a counts file or a saved estimate records, read back and
held against what a caller gives.

``ldpopt aggregate`` (and every command that writes a table) records the oracle, its parameters, ε,
n and d beside the counts: a sidecar ``FILE.meta.json`` for CSV, the schema metadata key ``ldpopt``
for Parquet (:func:`ldpopt.cli._io.write_table`). :func:`read_recorded` reads that record;
:func:`reconcile` fills what the caller left out from it and refuses a contradiction, naming both
values. Choices made here (no paper speaks of it):

* a field the record lacks is not checked (counts without a record work as they always did);
* numbers are the same when equal to 1e-12 relative (a decimal ε typed by hand and the float the
  writer recorded); an integer parameter recorded as ``8`` and given as ``8.0`` is the same;
* oracle names are compared by the registered name, case-insensitively (``OLH`` is ``olh``);
* a record that is not a JSON object, or a field of the wrong type, is an error naming the file,
  never a record silently ignored.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Recorded", "read_recorded", "same_value", "sha256_of", "show", "sidecar_of"]

#: the Parquet schema metadata key of ldpopt's record
PARQUET_KEY = b"ldpopt"


def sidecar_of(path) -> Path:
    """The record of a CSV file: ``counts.csv`` → ``counts.csv.meta.json``."""
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


@dataclass(frozen=True)
class Recorded:
    """The configuration recorded beside counts (each field None when the record does not state it).

    ``source`` names the record (``counts.csv.meta.json``, or ``the Parquet metadata of x.parquet``)
    for messages; ``labelled``: True when the values are labels, False when they are the positions
    0..d-1, None when the record does not say."""

    source: str
    oracle: str | None = None
    epsilon: float | None = None
    n: int | None = None
    d: int | None = None
    params: dict = field(default_factory=dict)
    labelled: bool | None = None

    @classmethod
    def from_dict(cls, doc, source: str) -> Recorded:
        """Read the fields of a metadata object; a field of the wrong type is a ValueError naming it
        and ``source``."""
        if not isinstance(doc, dict):
            raise ValueError(f"{source}: the metadata must be a JSON object, got {type(doc).__name__}")

        def get(key, kind, check=lambda v: True):
            v = doc.get(key)
            if v is None:
                return None
            if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool or not check(v):
                raise ValueError(f"{source}: recorded {key} {v!r} is not a valid {key}")
            return v

        params = doc.get("oracle_params") or {}
        if not isinstance(params, dict):
            raise ValueError(f"{source}: recorded oracle_params {params!r} is not a JSON object")
        eps = get("epsilon", (int, float), lambda v: math.isfinite(v) and v > 0)
        return cls(source=source, oracle=get("oracle", str, bool), epsilon=None if eps is None else float(eps),
                   n=get("n", int, lambda v: v >= 1), d=get("d", int, lambda v: v >= 2),
                   params=dict(params), labelled=get("labelled", bool))

    def stated(self) -> list[str]:
        """The fields this record states, in order (for a message)."""
        out = [k for k in ("oracle", "epsilon", "n", "d") if getattr(self, k) is not None]
        return out + sorted(self.params)


def read_recorded(path) -> Recorded | None:
    """The record of a counts file: its sidecar ``FILE.meta.json`` (any file but Parquet), or a
    Parquet file's schema metadata ``ldpopt``; None when there is none. A record that cannot be read
    is a ValueError naming it (never ignored)."""
    path = Path(path)
    if not path.is_file():  # a missing file, a folder: the reader of the counts names the error
        return None
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq

            meta = pq.read_schema(path).metadata or {}
        except Exception:  # noqa: BLE001 - not a readable Parquet file: the reader says so, naming it
            return None
        if PARQUET_KEY not in meta:
            return None
        source = f"the Parquet metadata of {path}"
        text = meta[PARQUET_KEY].decode("utf-8", errors="replace")
    else:
        side = sidecar_of(path)
        if not side.is_file():
            return None
        source = str(side)
        try:
            text = side.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read the counts' metadata: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: the counts' metadata is not valid JSON ({exc})") from None
    return Recorded.from_dict(doc, source)


def same_value(a, b) -> bool:
    """Whether a given value and a recorded one are the same: numbers equal to 1e-12 relative (not
    bools: ``True`` is not ``1``), anything else equal as text."""
    num = (numbers.Real,)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return str(a) == str(b)


def show(value) -> str:
    """A value in a message: numbers as typed (``8``, ``1.5``), text quoted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return repr(value)
    text = repr(float(value)) if isinstance(value, float) else str(value)
    return text.removesuffix(".0")


def sha256_of(path) -> str:
    """The SHA-256 digest of a file's bytes, as 64 hex digits (read in 1 MiB blocks)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
