"""Vectorised parsers for transaction files (FIMI / SPMF) and ``value,count`` files.

The transaction parser works on the raw bytes with numpy (no Python loop over lines or items), so
the 4 MB FIMI ``retail.dat`` parses in well under a second.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Transactions", "item_counts", "one_per_transaction", "parse_transactions"]

_SEP = np.zeros(256, dtype=bool)
_SEP[[ord(" "), ord("\t"), ord("\r"), ord("\n"), ord(",")]] = True
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[ord("0") : ord("9") + 1] = True
_MINUS = ord("-")
_POW10 = 10 ** np.arange(19, dtype=np.int64)
_SPMF_MARKERS = (-1, -2)  # SPMF sequence layout: -1 ends an itemset, -2 ends a sequence


class Transactions:
    """Transactions in CSR form: ``items[indptr[t]:indptr[t+1]]`` are the item indices of transaction t.

    ``item_ids`` holds the original integer ids, sorted; ``items`` indexes into it. Empty lines are
    not transactions (FIMI and SPMF files have none; a trailing newline is not a transaction).
    """

    __slots__ = ("indptr", "item_ids", "items")

    def __init__(self, items: np.ndarray, indptr: np.ndarray, item_ids: np.ndarray):
        self.items, self.indptr, self.item_ids = items, indptr, item_ids
        for a in (items, indptr, item_ids):
            a.setflags(write=False)

    @property
    def n_transactions(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_occurrences(self) -> int:
        return int(self.items.shape[0])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)


def _line_of(arr: np.ndarray, pos: int) -> int:
    return int(np.count_nonzero(arr[:pos] == 10)) + 1


def parse_transactions(data: bytes, *, what: str = "transactions") -> Transactions:
    """Parse integer transactions, one per line, items separated by spaces, tabs or commas.

    Handles FIMI (``1 2 3 ``, trailing space), SPMF itemset (``1,2,3``) and the reduced SPMF
    sequence layout (``1 -1 2 -1 3``, CRLF; the ``-1``/``-2`` markers are dropped). Anything else
    (letters, other negative numbers, numbers of more than 18 digits) raises ``ValueError`` naming
    ``what`` and the line.
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    if arr.size == 0:
        raise ValueError(f"{what} is empty: expected one transaction of integer items per line")
    is_digit = _DIGIT[arr]
    is_tok = is_digit | (arr == _MINUS)
    bad = ~(is_tok | _SEP[arr])
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what} must hold integer items separated by spaces, tabs or commas; line "
            f"{_line_of(arr, pos)} has byte {bytes(arr[pos:pos + 1])!r}"
        )
    prev = np.concatenate(([False], is_tok[:-1]))
    nxt = np.concatenate((is_tok[1:], [False]))
    starts = np.flatnonzero(is_tok & ~prev)
    ends = np.flatnonzero(is_tok & ~nxt) + 1  # exclusive
    if starts.size == 0:
        raise ValueError(f"{what} holds no items")
    neg = arr[starts] == _MINUS
    first_digit = starts + neg
    # a '-' may only open a token, and must be followed by at least one digit
    minus_pos = np.flatnonzero(arr == _MINUS)
    ok_minus = np.isin(minus_pos, starts[neg]) & (minus_pos + 1 < arr.size)
    if minus_pos.size and (not ok_minus.all() or not is_digit[minus_pos[ok_minus] + 1].all()):
        bad_pos = minus_pos[~ok_minus][0] if not ok_minus.all() else minus_pos[~is_digit[minus_pos + 1]][0]
        raise ValueError(f"{what}: malformed number on line {_line_of(arr, int(bad_pos))}")
    ndig = ends - first_digit
    if ndig.max() > 18:
        pos = int(starts[np.argmax(ndig)])
        raise ValueError(f"{what}: item on line {_line_of(arr, pos)} has more than 18 digits")
    # value of each token = sum of digit * 10**(digits to its right), summed per token by reduceat
    dpos = np.flatnonzero(is_digit)
    start_mask = np.zeros(arr.size, dtype=np.int64)
    start_mask[starts] = 1
    tok_of_digit = np.cumsum(start_mask)[dpos] - 1
    contrib = (arr[dpos].astype(np.int64) - 48) * _POW10[ends[tok_of_digit] - dpos - 1]
    first_digit_rank = np.cumsum(is_digit)[first_digit] - 1  # rank of each token's first digit
    values = np.add.reduceat(contrib, first_digit_rank)
    values = np.where(neg, -values, values)
    line_of_tok = np.cumsum(arr == 10)[starts]  # newlines before each token = its 0-based line
    keep = ~np.isin(values, _SPMF_MARKERS) | ~neg
    if (neg & keep).any():
        pos = int(starts[np.flatnonzero(neg & keep)[0]])
        raise ValueError(f"{what}: negative item on line {_line_of(arr, pos)} (only SPMF markers -1/-2 are allowed)")
    values, line_of_tok = values[keep], line_of_tok[keep]
    if values.size == 0:
        raise ValueError(f"{what} holds no items")
    vmax = int(values.max())
    if vmax <= 4 * values.size + 1_000_000:
        # ids are small non-negative ints: a bincount relabelling avoids an O(m log m) sort
        present = np.bincount(values, minlength=vmax + 1) > 0
        item_ids = np.flatnonzero(present)
        items = (np.cumsum(present) - 1)[values]
    else:
        item_ids, items = np.unique(values, return_inverse=True)
    # tokens are in line order, so transaction boundaries are where the line number changes
    change = np.flatnonzero(np.diff(line_of_tok)) + 1
    indptr = np.concatenate(([0], change, [values.size])).astype(np.int64)
    return Transactions(items.astype(np.int64), indptr, item_ids.astype(np.int64))


def item_counts(tx: Transactions) -> np.ndarray:
    """Each occurrence counts (Jia & Gong INFOCOM 2019 §IV-A1: a user per click / per sale)."""
    return np.bincount(tx.items, minlength=tx.item_ids.shape[0]).astype(np.int64)


def one_per_transaction(tx: Transactions, gen: np.random.Generator) -> np.ndarray:
    """One item chosen uniformly at random from each transaction (Wang et al. arXiv App. C.1).

    One ``Generator.integers`` draw per transaction, vectorised over the CSR offsets.
    """
    lengths = tx.lengths
    pick = tx.indptr[:-1] + gen.integers(0, lengths, dtype=np.int64)
    return np.bincount(tx.items[pick], minlength=tx.item_ids.shape[0]).astype(np.int64)
