"""The docstrings as the API reference shows them (``ldpopt._public.walk``: every name of every
``__all__`` under ``ldpopt.SUBMODULES``, with their classes' methods and properties).

* Fails on a public class or function of an ``__all__`` without a docstring.
* Fails on any public name (members included) lacking ``Examples``, ``Parameters`` (where it takes
  parameters other than self) or ``Returns`` (functions and methods not annotated ``-> None``);
  ``python tests/test_docstrings.py`` lists what lacks which section. An override of a documented
  ldpopt method is documented by reference: no docstring of its own (``inspect.getdoc`` reads the
  base's), or one that names the method it overrides (``See ``Base.method``.``) and says what
  differs; the base carries the sections. Fails on an override whose docstring repeats a section of
  its base's word for word (``repeated_sections``): the reader finds it once, on the base.
* Fails on a module docstring over 15 lines, or on a median over 4 (``module_docstring_lengths``):
  a module's docstring says what it holds; derivations go to docs/notes, timings to benchmarks/.
* Runs every ``Examples`` section with doctest, those of names a module keeps but its package does
  not list included (``_unlisted``), (numpy's print options as the docstrings write them)
  and fails on any example whose output differs.

Cost: about 9 s of CPU (the imports of every module, and about 3,500 example lines).
"""

from __future__ import annotations

import ast
import doctest
import inspect
import re
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

from ldpopt._public import walk  # the API reference reads the same list (docs/conf.py)

SECTIONS = ("Parameters", "Returns", "Examples")



def _documented():
    """(full name, object, is a member) for every public class, function, method and property, each
    object once (the first name that reaches it)."""
    seen, out = set(), []
    for full, obj in walk():
        if inspect.ismodule(obj) or not (callable(obj) or isinstance(obj, property)) or id(obj) in seen:
            continue
        seen.add(id(obj))
        member = full.count(".") > 2 and inspect.isclass(_owner(full))
        out.append((full, obj, member))
    return out


def _owner(full: str):
    import importlib

    module, _, rest = full.rpartition(".")
    try:
        return importlib.import_module(module)
    except ImportError:
        parent, _, name = module.rpartition(".")
        return getattr(importlib.import_module(parent), name)


def missing_sections():
    """{section: [full names]} of the public callables whose docstring lacks that section (a class's
    Returns is not asked for; a property's Parameters and Returns neither)."""
    out: dict[str, list[str]] = {s: [] for s in SECTIONS}
    for full, obj, _member in _documented():
        doc = inspect.getdoc(obj) or ""
        for section in SECTIONS:
            if section != "Examples" and (isinstance(obj, property) or (section == "Returns" and inspect.isclass(obj))):
                continue
            if not re.search(rf"^{section}\n-+$", doc, re.MULTILINE):
                out[section].append(full)
    return out


def test_every_public_name_has_a_docstring():
    names = [(full, obj, member) for full, obj, member in _documented()]
    assert len(names) > 500, len(names)
    bare = [full for full, obj, member in names if not member and not (inspect.getdoc(obj) or "").strip()]
    assert not bare, f"public names without a docstring: {bare}"


def test_doctest_finds_a_failing_example():
    """The runner below fails on a wrong output (so a passing run means something)."""
    def f():
        """
        >>> 1 + 1
        3
        """

    assert _run_examples([("f", f)]) == (1, 1)


def _run_examples(items) -> tuple[int, int]:
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    with np.printoptions(legacy=False):
        for full, obj in items:
            for test in finder.find(obj, full, globs={}):
                runner.run(test, out=lambda s: sys.stderr.write(s))
    res = runner.summarize(verbose=False)
    return res.failed, res.attempted


def test_docstring_examples_run():
    items = [(full, obj.fget if isinstance(obj, property) else obj) for full, obj, _ in _documented()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed, attempted = _run_examples(items)
    assert failed == 0, f"{failed} of {attempted} docstring examples failed (stderr has the diffs)"
    assert attempted >= 30, attempted  # the Examples of the headline names: postprocess, Problem, ...


def _needs(obj) -> set[str]:
    """The numpydoc sections a public name must have: Examples always; Parameters where it takes
    parameters other than self/cls; Returns for a function or method not annotated ``-> None``
    (not for a class or a property)."""
    need = {"Examples"}
    if isinstance(obj, property):
        return need
    target = obj
    if inspect.isclass(obj):
        if issubclass(obj, BaseException) and "__init__" not in vars(obj):
            return need  # an exception class takes its message, as every exception does
        target = obj.__init__
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return need
    if any(p.name not in ("self", "cls") for p in sig.parameters.values()):
        need.add("Parameters")
    if not inspect.isclass(obj) and sig.return_annotation not in (None, "None"):
        need.add("Returns")
    return need


def overridden(full: str, obj):
    """The documented ldpopt method that the member ``full`` overrides (its class's first base in the
    MRO defining the name with a docstring), or None."""
    if isinstance(obj, property) or full.count(".") <= 2:
        return None
    try:
        owner = _owner(full)
    except (ImportError, AttributeError):
        return None
    if not inspect.isclass(owner):
        return None
    name = full.rsplit(".", 1)[1]
    for base in owner.__mro__[1:]:
        found = vars(base).get(name)
        if found is not None and (base.__module__ or "").startswith("ldpopt"):
            found = getattr(found, "__func__", found)
            return found if (getattr(found, "__doc__", None) or "").strip() else None
    return None


def by_reference(obj, base) -> bool:
    """An override documented by reference: no docstring of its own, or one naming the base's method."""
    own = (getattr(obj, "__doc__", None) or "").strip()
    return not own or re.search(rf"\b{re.escape(base.__qualname__)}\b", own) is not None


def test_every_public_name_has_its_sections():
    lacking = []
    for full, obj, _member in _documented():
        base = overridden(full, obj)
        if base is not None and by_reference(obj, base):
            continue  # the base's sections document it
        doc = inspect.getdoc(obj) or ""
        lacking += [f"{full}: {s}" for s in sorted(_needs(obj)) if not re.search(rf"^{s}\n-+$", doc, re.MULTILINE)]
    assert not lacking, "public names lacking a numpydoc section:\n" + "\n".join(lacking)


def test_needs_asks_for_the_sections_of_a_signature():
    def f(x: int) -> int:
        return x

    def g() -> None:
        pass

    assert _needs(f) == {"Parameters", "Returns", "Examples"}
    assert _needs(g) == {"Examples"}
    assert _needs(property(lambda self: 1)) == {"Examples"}


def test_an_override_may_refer_to_its_base():
    from ldpopt.estimate import check_estimate
    from ldpopt.oracles.base import FrequencyOracle

    base = FrequencyOracle.support_matrix

    def quiet(self):
        return None

    def refers(self):
        """The sketch's own support. See ``FrequencyOracle.support_matrix``."""

    def says_other(self):
        """Something else entirely."""

    assert by_reference(quiet, base) and by_reference(refers, base) and not by_reference(says_other, base)
    # the public members that override a documented base are found, each with a base of its own class's MRO
    found = [(full, overridden(full, obj)) for full, obj, member in _documented() if member]
    found = [(full, b) for full, b in found if b is not None]
    assert len(found) >= 50, len(found)
    for full, b in found[:20]:
        assert b.__name__ == full.rsplit(".", 1)[1] and b is not getattr(_owner(full), b.__name__)
    assert overridden("ldpopt.estimate.check_estimate", check_estimate) is None   # a function has no base


def sections(doc: str | None) -> dict[str, str]:
    """{section title: its body} of a numpydoc docstring."""
    parts = re.split(r"^(\w[\w ]*)\n-+\n", inspect.cleandoc(doc or ""), flags=re.MULTILINE)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def repeated_sections(obj, base) -> list[str]:
    """The sections of ``obj``'s own docstring that repeat ``base``'s word for word."""
    own, theirs = sections(getattr(obj, "__doc__", None)), sections(base.__doc__)
    return [s for s, body in own.items() if body and theirs.get(s) == body]


def test_no_override_repeats_its_base():
    repeats = []
    for full, obj, member in _documented():
        base = overridden(full, obj) if member else None
        if base is not None and (found := repeated_sections(obj, base)):
            repeats.append(f"{full}: {', '.join(found)} (as {base.__qualname__})")
    assert not repeats, "overrides repeating their base's sections (cut them to by-reference):\n" + "\n".join(repeats)


def test_repeated_sections_finds_a_copied_section():
    from ldpopt.oracles.base import FrequencyOracle

    base = FrequencyOracle.support_matrix
    body = sections(base.__doc__)["Parameters"]

    def copied(self, reports):
        return None

    copied.__doc__ = f"The sketch's own.\n\nParameters\n----------\n{body}\n"

    def own(self, reports):
        """The sketch's own.

        Parameters
        ----------
        reports : ndarray
            Something said differently.
        """

    assert repeated_sections(copied, base) == ["Parameters"] and repeated_sections(own, base) == []


def module_docstring_lengths(root: Path | None = None) -> dict[str, int]:
    """{module path: lines of its docstring} for every module under ``root`` (default: ldpopt/), 0
    for a module without one."""
    import ldpopt

    root = root or Path(ldpopt.__file__).parent
    out = {}
    for path in sorted(root.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=True)
        out[str(path.relative_to(root))] = len(doc.splitlines()) if doc else 0
    return out


def test_module_docstrings_are_short():
    lengths = module_docstring_lengths()
    assert len(lengths) > 300, len(lengths)
    long = {m: n for m, n in lengths.items() if n > 15}
    assert not long, f"module docstrings over 15 lines (move the notes to docs/notes): {long}"
    assert statistics.median(lengths.values()) <= 4, statistics.median(lengths.values())


def test_module_docstring_lengths_counts_lines(tmp_path):
    (tmp_path / "short.py").write_text('"""One line."""\n')
    (tmp_path / "long.py").write_text('"""' + "\n".join(f"line {i}" for i in range(16)) + '\n"""\nx = 1\n')
    (tmp_path / "bare.py").write_text("x = 1\n")
    assert module_docstring_lengths(tmp_path) == {"bare.py": 0, "long.py": 16, "short.py": 1}


if __name__ == "__main__":
    for section, names in missing_sections().items():
        print(f"## without {section} ({len(names)})")
        print("\n".join(names))


def _unlisted():
    """(full name, object) of the functions, classes and their own methods defined in any ldpopt
    module (every module is imported; one needing a missing extra is skipped) under a public name that :func:`walk` does not reach (names a module keeps but its
    package does not list): their examples run too."""
    import importlib
    import pkgutil
    import types

    import ldpopt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(ldpopt.__path__, "ldpopt."):
            if info.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(info.name)
            except ImportError:  # a module of an extra that is not installed
                continue
    covered = {id(obj.fget if isinstance(obj, property) else obj) for _, obj, _ in _documented()}
    out = []
    for modname, mod in sorted(sys.modules.items()):
        if not modname.startswith("ldpopt.") or any(p.startswith("_") for p in modname.split(".")[1:]):
            continue
        for name, obj in sorted(vars(mod).items()):
            if name.startswith("_") or getattr(obj, "__module__", None) != modname:
                continue
            if not isinstance(obj, (types.FunctionType, type)):
                continue
            found = [(f"{modname}.{name}", obj)]
            if isinstance(obj, type):
                for attr, member in vars(obj).items():
                    member = member.fget if isinstance(member, property) else member
                    if not attr.startswith("_") and isinstance(member, types.FunctionType):
                        found.append((f"{modname}.{name}.{attr}", member))
            out += [(full, o) for full, o in found if id(o) not in covered]
            covered |= {id(o) for _, o in found}
    return out


def test_unlisted_names_examples_run():
    """Names a module defines but its package no longer lists keep running their examples."""
    items = _unlisted()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed, attempted = _run_examples(items)
    assert failed == 0, f"{failed} of {attempted} unlisted names' examples failed (stderr has the diffs)"
    assert attempted >= 30, attempted
