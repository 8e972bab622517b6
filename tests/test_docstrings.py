"""The docstrings as the API reference shows them (``ldpopt._public.walk``: every name of every
``__all__`` under ``ldpopt.SUBMODULES``, with their classes' methods and properties).

* Fails on a public class or function of an ``__all__`` without a docstring.
* Fails on any public name (members included) lacking ``Examples``, ``Parameters`` (where it takes
  parameters other than self) or ``Returns`` (functions and methods not annotated ``-> None``);
  ``python tests/test_docstrings.py`` lists what lacks which section.
* Runs every ``Examples`` section with doctest (numpy's print options as the docstrings write them)
  and fails on any example whose output differs.

Cost: about 8 s of CPU (the imports, and about 3,000 example lines of every package).
"""

from __future__ import annotations

import doctest
import inspect
import re
import sys
import warnings

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


def test_every_public_name_has_its_sections():
    lacking = []
    for full, obj, _member in _documented():
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


if __name__ == "__main__":
    for section, names in missing_sections().items():
        print(f"## without {section} ({len(names)})")
        print("\n".join(names))
