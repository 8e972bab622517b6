"""Frequency oracles: GRR, OUE, SUE, OLH, BLH, HR, SS, RUE, RLH, RWS (and the sketches CMS, HCMS, RAPPOR, RWS with a seed pool; the
longitudinal L-GRR, L-SUE, L-SOUE, L-OUE, L-OSUE, LOLOHA, L-RAPPOR, dBitFlipPM) behind one
interface (:class:`FrequencyOracle`), in a registry that :func:`register` extends with an oracle of
one's own (docs/extending.md).

>>> from ldpopt import oracles
>>> oue = oracles.get("oue", epsilon=1.0, d=1024)
"""

from __future__ import annotations

from .. import _deprecated
from ..noise import register_resolver
from .base import FrequencyOracle
from .cms import CMS
from .grr import GRR
from .hadamard import HR
from .hashing import BLH, OLH
from .hcms import HCMS
from .longitudinal import LGRR, LOLOHA, LOSUE, LOUE, LRAPPOR, LSOUE, LSUE, DBitFlipPM
from .rappor import RAPPOR
from .reoptimized import RLH, RUE
from .subset import SS
from .unary import OUE, SUE
from .wheel import RWS, PooledRWS  # registered; not listed (a pool of RWS reports, no user calls it)

__all__ = ["BLH", "CMS", "GRR", "HCMS", "HR", "LGRR", "LOLOHA", "LOSUE", "LOUE", "LRAPPOR", "LSOUE", "LSUE", "OLH", "OUE",
           "RAPPOR", "RLH", "RUE", "RWS", "SS", "SUE", "DBitFlipPM", "FrequencyOracle",
           "available", "get", "register"]

_REGISTRY: dict[str, type[FrequencyOracle]] = {}

# the conformance suite moved one floor up, beside the others (ldpopt.conformance.oracles), one release
_deprecated.install({f"{__name__}.conformance": "ldpopt.conformance.oracles"})


def register(cls: type[FrequencyOracle]) -> type[FrequencyOracle]:
    """Class decorator: register a :class:`FrequencyOracle` subclass under its ``name`` (lower case),
    so that :func:`get`, the estimates' ``oracle`` field and every feature that takes a registry
    name find it. A name already registered to another class is an error.

    Parameters
    ----------
    cls : type
        A :class:`FrequencyOracle` subclass with a lower-case ``name``.

    Returns
    -------
    type
        ``cls`` unchanged.

    Raises
    ------
    TypeError
        If ``cls`` is not a :class:`FrequencyOracle` subclass.
    ValueError
        If its ``name`` is missing, empty or not lower case, or is registered to another class.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> oracles.register(oracles.GRR) is oracles.GRR  # registering the same class again is a no-op
    True
    >>> oracles.register(int)
    Traceback (most recent call last):
    ...
    TypeError: register takes a FrequencyOracle subclass, got <class 'int'>
    """
    if not (isinstance(cls, type) and issubclass(cls, FrequencyOracle)):
        raise TypeError(f"register takes a FrequencyOracle subclass, got {cls!r}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name or name != name.lower():
        raise ValueError(f"an oracle's name must be a non-empty lower-case string, got {name!r}")
    if _REGISTRY.get(name, cls) is not cls:
        raise ValueError(f"oracle name {name!r} is already registered to {_REGISTRY[name].__name__}")
    _REGISTRY[name] = cls
    return cls


for _cls in (GRR, OLH, BLH, HR, OUE, SUE, SS, RUE, RLH, RWS, PooledRWS, CMS, HCMS, RAPPOR,
             LGRR, LSUE, LSOUE, LOUE, LOSUE, LOLOHA, LRAPPOR, DBitFlipPM):
    register(_cls)


def available(sketches: bool = False, longitudinal: bool = False) -> list[str]:
    r"""Registry names of the pure one-shot oracles (a report supports a set of values; Eq. 2 variance exact).

    ``sketches=True`` adds the oracles that are not pure (``pure = False``: CMS, HCMS, RAPPOR): one
    fixed public hash family shared by all users, so for that family the estimate is biased by the
    collisions and its variance is the family's (their modules); the registry-wide checks of the
    pure oracles (EM's likelihoods, shards, the privacy audit, ``ldpopt verify``) do not take them.
    ``longitudinal=True`` adds every memoised oracle (``longitudinal = True``: L-GRR, the L-UE family,
    LOLOHA, dBitFlipPM and L-RAPPOR, the last not pure whatever ``sketches`` says): one round of fresh
    users is a one-shot oracle whose report reveals ε₁ < ε (``epsilon`` is their :math:`ε_\infty`), so the checks that
    a report is tight at ε do not take them.

    Parameters
    ----------
    sketches : bool, default False
        Also list the sketch oracles.
    longitudinal : bool, default False
        Also list the longitudinal oracles.

    Returns
    -------
    list of str
        Sorted registry names.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> oracles.available()
    ['blh', 'grr', 'hr', 'olh', 'oue', 'rlh', 'rue', 'rws', 'ss', 'sue']
    >>> len(set(oracles.available(longitudinal=True)) - set(oracles.available()))  # all 8 memoised ones
    8
    """
    return sorted(name for name, cls in _REGISTRY.items()
                  if (cls.longitudinal and longitudinal) or (not cls.longitudinal and (cls.pure or sketches)))


def oracle_class(name: str, base=None) -> type[FrequencyOracle]:
    """The class registered as ``name`` (case-insensitive), or an oracle of one's own named
    ``"FILE.py:NAME"`` / ``"MODULE:NAME"`` (a :class:`FrequencyOracle` subclass; the file relative to
    ``base``, None: the current directory), which is registered under its ``name`` on first use. A
    name not registered loads the plugins ``ldpopt --plugin`` passed to this process
    (:data:`ldpopt._userfunc.PLUGINS_ENV`) and looks again; still unknown, it is a ValueError.

    Parameters
    ----------
    name : str
        A registry name (any case) or ``"FILE.py:NAME"`` / ``"MODULE:NAME"``.
    base : path-like or None, default None
        Directory a relative ``FILE.py`` is read from.

    Returns
    -------
    type
        The :class:`FrequencyOracle` subclass.

    Raises
    ------
    ValueError
        If the name is unknown, or the reference does not name a :class:`FrequencyOracle` subclass.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> oracles.oracle_class("OUE")
    <class 'ldpopt.oracles.unary.OUE'>
    >>> oracles.oracle_class("ouee")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: oracle must be one of [...] or an oracle of your own, FILE.py:NAME, got 'ouee'
    """
    from .._userfunc import is_reference, load_attribute, plugins_from_env

    if is_reference(name):
        obj = load_attribute(name, base, where=f"oracle {name}")
        if not (isinstance(obj, type) and issubclass(obj, FrequencyOracle)):
            raise ValueError(f"oracle {name}: a frequency oracle is a FrequencyOracle subclass, got "
                             f"{type(obj).__name__} {obj!r}")
        return register(obj)
    if isinstance(name, str) and name.lower() not in _REGISTRY:
        plugins_from_env()
    if not isinstance(name, str) or name.lower() not in _REGISTRY:
        raise ValueError(f"oracle must be one of {sorted(_REGISTRY)} or an oracle of your own, FILE.py:NAME, "
                         f"got {name!r}")
    return _REGISTRY[name.lower()]


def get(name: str, epsilon: float, d: int, **params) -> FrequencyOracle:
    """Build the oracle registered as ``name`` (case-insensitive), e.g. ``get("oue", 1.0, 1024)``, or
    one of one's own, ``get("my_oracle.py:Mine", 1.0, 1024)`` (:func:`oracle_class`).

    Parameters
    ----------
    name : str
        What :func:`oracle_class` accepts.
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size >= 2.
    **params
        The oracle's own parameters (OLH: ``g``; SS: ``k``; RAPPOR: ``num_bits``, ...).

    Returns
    -------
    FrequencyOracle

    Raises
    ------
    ValueError
        If the name is unknown or a parameter is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> oue = oracles.get("OUE", epsilon=1.0, d=8)
    >>> oue
    OUE(epsilon=1, d=8)
    >>> round(oue.p, 4), round(oue.q, 4)
    (0.5, 0.2689)
    >>> oue.simulate([500, 300, 100, 50, 30, 10, 5, 5], rng=0).n
    1000
    """
    return oracle_class(name)(epsilon=epsilon, d=d, **params)


def _resolve(estimate) -> FrequencyOracle | None:
    # the noise source of an estimate a registered oracle produced: that oracle, rebuilt from its ε, d
    # and structural parameters (None for any other name)
    from .._userfunc import is_reference

    if is_reference(estimate.oracle):
        return None
    try:
        return oracle_class(estimate.oracle).from_estimate(estimate)
    except (ValueError, TypeError):
        return None


register_resolver(_resolve)
