"""``--param`` for ``ldpopt postprocess``: which method takes which parameter, of which type; and
``--oracle-param`` (``perturb``, ``postprocess``, ``solve``, ``choose``): the oracle's parameters, typed
the same way from its constructor's signature.

Notes: docs/notes/cli.md, "ldpopt.cli._params"."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

from ._args import InputError, integer

__all__ = ["ParamSpec", "method_params", "oracle_param_specs", "oracle_params", "params_help", "route_params"]

_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}
_NONE = {"none", "null"}


@dataclass(frozen=True)
class ParamSpec:
    name: str
    types: tuple[str, ...]  # among "bool", "int", "float", "str", "tuple"; tried in this order
    optional: bool  # accepts None ("none" on the command line)
    length: int = 0  # for "tuple": how many comma-separated numbers

    def type_text(self) -> str:
        t = "|".join(f"{self.length} numbers a,b" if t == "tuple" else t for t in self.types)
        return t + ("|none" if self.optional else "")

    def describe(self) -> str:
        return f"{self.name} ({self.type_text()})"

    def parse(self, text: str, where: str):
        s = text.strip()
        if self.optional and s.lower() in _NONE:
            return None
        for t in self.types:
            try:
                return _parse_as(t, s, self.length)
            except (InputError, ValueError):
                continue
        raise InputError(f"{where}: {self.name} must be {self.type_text()}, got {text!r}")


def _parse_as(t: str, s: str, length: int):
    if t == "bool":
        if s.lower() in _TRUE:
            return True
        if s.lower() in _FALSE:
            return False
        raise ValueError(s)
    if t == "int":
        return integer(s, "value")
    if t == "float":
        value = float(s)
        if not math.isfinite(value):
            raise ValueError(s)
        return value
    if t == "tuple":
        parts = [p for p in s.strip("()[] ").split(",")]
        if len(parts) != length:
            raise ValueError(s)
        return tuple(_parse_as("float", p.strip(), 0) for p in parts)
    return s  # str


def _spec(param: inspect.Parameter) -> ParamSpec:
    ann, default = param.annotation, param.default
    if isinstance(ann, type):
        ann = ann.__name__
    if isinstance(ann, str) and ann:
        names = [a.strip() for a in ann.split("|")]
        optional = "None" in names
        types = tuple(t for t in ("bool", "int", "float", "str") if t in names)
        if types:
            return ParamSpec(param.name, types, optional)
    if isinstance(default, tuple):
        return ParamSpec(param.name, ("tuple",), False, len(default))
    for t in (bool, int, float):  # bool before int: True is an int
        if isinstance(default, t):
            return ParamSpec(param.name, (t.__name__,), False)
    return ParamSpec(param.name, ("str",), default is None)


def method_params(name: str) -> dict[str, ParamSpec]:
    """The parameters method ``name`` takes, by name, in signature order (the estimate excluded)."""
    from .. import methods

    sig = inspect.signature(methods.get(name).func)
    ps = list(sig.parameters.values())[1:]
    return {p.name: _spec(p) for p in ps
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _table() -> str:
    from .. import methods

    return "; ".join(f"{m}: {', '.join(s.describe() for s in method_params(m).values())}"
                     for m in sorted(methods.names()) if method_params(m))


def params_help() -> str:
    """Every method's parameters with their types, one line per method (for ``--help``)."""
    from .. import methods

    return "\n".join(f"  {m:<14} {', '.join(s.describe() for s in method_params(m).values())}"
                     for m in sorted(methods.names()) if method_params(m))


def route_params(items, selected: list[str]) -> dict[str, dict]:
    """``--param`` strings → ``{method: {param: typed value}}`` for the ``selected`` methods.

    Raises :class:`InputError` for a malformed item, a parameter no selected method takes (naming it
    and who takes what), a ``METHOD.`` prefix naming a method not selected, or a value of the wrong type.
    """
    from .. import methods

    out: dict[str, dict] = {m: {} for m in selected}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--param must look like NAME=VALUE or METHOD.NAME=VALUE, got {item!r}")
        key, text = (s.strip() for s in item.split("=", 1))
        target, _, pname = key.rpartition(".")
        if target:
            methods.get(target)  # an unknown method is named by the registry's message
            if target not in selected:
                raise InputError(f"--param {item}: method {target!r} is not selected (--method: {', '.join(selected)})")
            targets = [target]
        else:
            targets = selected
        takers = [m for m in targets if pname in method_params(m)]
        if not takers:
            raise InputError(f"--param {pname}: no selected method ({', '.join(targets)}) takes a parameter "
                             f"{pname!r}; parameters by method: {_table()}")
        for m in takers:
            if pname in out[m]:
                raise InputError(f"--param {pname} is given twice for method {m}")
            out[m][pname] = method_params(m)[pname].parse(text, f"--param {item} (method {m})")
    return out


#: constructor arguments that are not oracle parameters on the command line (their own options, or
#: a table only the Python API can pass)
_NOT_ORACLE_PARAMS = {"epsilon", "d", "buckets"}


def oracle_param_specs(name: str) -> dict[str, ParamSpec]:
    """The parameters oracle ``name`` takes besides ε and d, from its constructor's signature."""
    from .. import oracles

    try:
        cls = type(oracles.get(name, epsilon=1.0, d=2))  # the registry's class (its defaults build)
    except ValueError as exc:
        raise InputError(f"--oracle: {exc}") from None
    ps = inspect.signature(cls.__init__).parameters.values()
    return {p.name: _spec(p) for p in ps
            if p.name != "self" and p.name not in _NOT_ORACLE_PARAMS and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def oracle_params(items, name: str, given: dict | None = None) -> dict:
    """``--oracle-param NAME=VALUE`` strings → ``{param: typed value}`` for oracle ``name`` (typed from
    its constructor's signature, as ``--param`` is from a method's), merged with ``given`` (the
    ``--g``/``--k`` shortcuts). An unknown parameter is an error naming it and listing the oracle's;
    a parameter given twice is an error."""
    out = dict(given or {})
    specs = oracle_param_specs(name) if items else {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--oracle-param must look like NAME=VALUE, got {item!r}")
        key, text = (s.strip() for s in item.split("=", 1))
        if key not in specs:
            listed = ", ".join(s.describe() for s in specs.values()) or "none"
            raise InputError(f"--oracle-param {key}: oracle {name} takes no parameter {key!r}; its parameters: {listed}")
        if key in out:
            raise InputError(f"--oracle-param {key} is given twice")
        out[key] = specs[key].parse(text, f"--oracle-param {item}")
    return out
