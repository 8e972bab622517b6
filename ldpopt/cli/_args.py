"""Argument parsing shared by every subcommand: one integer parser, one error type."""

from __future__ import annotations

import argparse
import math
from decimal import Decimal, InvalidOperation

__all__ = ["InputError", "int_arg", "integer", "number", "positive_number"]

_INT_LIMIT = 2**63  # larger "integers" are typos (1e400 users), and Decimal → int would be slow


class InputError(ValueError):
    """A problem with the user's input file or arguments (exit status 2, one line on stderr)."""


def integer(text, name: str, minimum: int | None = None) -> int:
    """``text`` as an int: a plain integer (``1000000``, ``1_000_000``) or a number in scientific
    notation that is an exact integer (``1e6``, ``2.5e3``). ``1.5e0``, ``nan`` or ``0x10`` are
    refused with a message naming ``name``. The check is exact (:class:`decimal.Decimal`), so no
    float rounding can turn ``1.0000000000000001e16`` into an integer silently."""
    s = str(text).strip()
    try:
        dec = Decimal(s)
    except InvalidOperation:
        raise InputError(f"{name} must be an integer (e.g. 1000000 or 1e6), got {text!r}") from None
    if not dec.is_finite() or dec != dec.to_integral_value():
        raise InputError(f"{name} must be an integer (e.g. 1000000 or 1e6), got {text!r}")
    if abs(dec) >= _INT_LIMIT:  # "1e30" is an integer: say what is wrong with it
        raise InputError(f"{name} {text!r} is an integer but too large: at most {_INT_LIMIT - 1} (2^63 - 1)")
    value = int(dec)
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {text!r}")
    return value


def int_arg(minimum: int | None = None):
    """An argparse ``type=`` for :func:`integer` (argparse names the option in its message)."""
    def parse(text):
        try:
            return integer(text, "the value", minimum)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = "integer"
    return parse


def number(text) -> float:
    """An argparse ``type=`` for a finite real number (``nan``/``inf`` refused here, not later)."""
    try:
        value = float(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_number(text) -> float:
    """An argparse ``type=`` for a finite number > 0 (a privacy budget): refused at the option that
    gave it, not later by the oracle it is handed to."""
    value = number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


def level(text) -> float:
    """An argparse ``type=`` for a probability strictly between 0 and 1 (a confidence level)."""
    value = number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text!r}")
    return value


def plain(x) -> str:
    """A number as a reader writes it: ``5000`` not ``np.float64(5000.0)``, ``2.5`` not ``2.5000``."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 2**63 else repr(x)
