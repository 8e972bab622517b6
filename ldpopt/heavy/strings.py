"""Strings as fixed-length bit strings, and their prefixes.

Notes: docs/notes/sketches.md, "ldpopt.heavy.strings"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int

__all__ = ["MAX_BYTES", "check_bits", "decode", "encode", "prefixes"]

#: longest string in bytes (8·7 = 56 bits, so codes and their prefixes are int64)
MAX_BYTES = 7


def _nbytes(nbytes) -> int:
    nb = _check_int(nbytes, "nbytes", 1)
    if nb > MAX_BYTES:
        raise ValueError(f"nbytes must be an integer in [1, {MAX_BYTES}], got {nb}")
    return nb


def encode(strings, nbytes: int, pad: bytes = b" ") -> np.ndarray:
    """int64 codes of ``strings`` (an iterable of ``str``/``bytes``) cut or ``pad``-padded to
    ``nbytes`` bytes, big-endian (module notes). Vectorised after one join of the bytes.

    Parameters
    ----------
    strings : iterable of str or bytes
        The strings (``str`` as UTF-8).
    nbytes : int
        Length in bytes, 1..7.
    pad : bytes, default b" "
        The single pad byte.

    Returns
    -------
    ndarray of int64
        One code per string.

    Raises
    ------
    ValueError
        ``nbytes`` outside 1..7, ``pad`` not one byte, or an item neither str nor bytes.

    Examples
    --------
    >>> from ldpopt.heavy import encode
    >>> encode(["hi", "h", "hiya"], nbytes=2)  # 'h' = 104, 'i' = 105, ' ' = 32
    array([26729, 26656, 26729])
    """
    nb = _nbytes(nbytes)
    if not isinstance(pad, bytes) or len(pad) != 1:
        raise ValueError(f"pad must be a single byte, got {pad!r}")
    raw = [s.encode("utf-8") if isinstance(s, str) else s for s in strings]
    if any(not isinstance(b, bytes) for b in raw):
        raise ValueError("strings must be str or bytes")
    buf = b"".join(b[:nb].ljust(nb, pad) for b in raw)
    arr = np.frombuffer(buf, dtype=np.uint8).reshape(len(raw), nb).astype(np.int64)
    weights = np.int64(1) << (8 * np.arange(nb - 1, -1, -1, dtype=np.int64))
    return arr @ weights


def decode(codes, nbytes: int) -> list[str]:
    """The padded strings of int64 ``codes`` (inverse of :func:`encode` up to the cut): UTF-8 with
    ``backslashreplace`` (a byte of a cut multi-byte character reads ``\\xNN``).

    Parameters
    ----------
    codes : array_like of int
        1-D codes in ``[0, 2^(8·nbytes))``.
    nbytes : int
        Length in bytes, 1..7.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        ``nbytes`` outside 1..7, or codes out of range or not 1-D.

    Examples
    --------
    >>> from ldpopt.heavy import decode
    >>> decode([26729, 26656], nbytes=2)
    ['hi', 'h ']
    """
    nb = _nbytes(nbytes)
    c = np.asarray(codes, dtype=np.int64)
    if c.ndim != 1 or np.any(c < 0) or np.any(c >= (np.int64(1) << (8 * nb))):
        raise ValueError(f"codes must be a 1-D array of integers in [0, 2^{8 * nb})")
    by = ((c[:, None] >> (8 * np.arange(nb - 1, -1, -1, dtype=np.int64))[None, :]) & 0xFF).astype(np.uint8)
    return [bytes(row).decode("utf-8", "backslashreplace") for row in by]


def check_bits(bits, total_bits: int, name: str = "bits") -> int:
    """``bits`` as an integer in [1, total_bits]."""
    b = _check_int(bits, name, 1)
    if b > total_bits:
        raise ValueError(f"{name} must be an integer in [1, {total_bits}] (the string length in bits), got {b}")
    return b


def prefixes(codes, total_bits: int, bits: int) -> np.ndarray:
    """The ``bits``-bit prefixes of ``total_bits``-bit codes: ``codes >> (total_bits − bits)``."""
    return np.asarray(codes, dtype=np.int64) >> np.int64(total_bits - bits)
