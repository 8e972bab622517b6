"""Sphinx configuration of ldpopt's documentation site (``make docs``; DESIGN.md, "docs/").

The guide is the Markdown pages of this folder (MyST), the root pages (README, REPRODUCTION,
BENCHMARKS, RELIABILITY, DESIGN) are included by thin pages here, the notebooks are rendered by
myst-nb with their committed outputs (never executed here: the test suite re-executes them), and the
API reference is generated at build time from ``ldpopt.SUBMODULES`` and each module's ``__all__``
(``_write_api``), so it lists every public name and cannot drift from the code.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # document this checkout's ldpopt

import ldpopt  # noqa: E402
from ldpopt._public import entries as _public  # noqa: E402 (the list tests/test_docstrings.py checks)

project = "ldpopt"
author = "the ldpopt authors"
copyright = "the ldpopt authors, MIT licence"  # noqa: A001 (Sphinx's name)
version = release = ldpopt.__version__

extensions = [
    "myst_nb",  # MyST Markdown pages and the notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_copybutton",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "figures/**/*.md", "notebooks/.ipynb_checkpoints"]
root_doc = "index"

# MyST: ::: fences for directives (``` fences stay code, as tests/test_readme.py reads them),
# anchors for the ## and ### headings the pages link to (page.md#a-heading)
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
# the notebooks as committed: their outputs are what `make test` compares against a fresh run
nb_execution_mode = "off"

# API pages: numpydoc renders the sections; its validation checks stay off (tests/test_docstrings.py
# reports the missing sections instead), and class member tables come from autodoc's :members:
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters say the types; signatures stay short
autosummary_generate = False

html_theme = "pydata_sphinx_theme"
html_title = f"ldpopt {release}"
html_theme_options = {
    "navbar_end": ["search-button", "theme-switcher"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["ldpopt.css"]

#: Root pages included by a page of this folder: a README link to one of them goes to its page.
ROOT_PAGES = {"REPRODUCTION.md": "reproduction.md", "BENCHMARKS.md": "benchmarks.md",
              "RELIABILITY.md": "reliability.md", "DESIGN.md": "design.md", "notebooks/": "gallery.md"}
_ROOT_LINK = re.compile(r"\]\((?:docs/|(" + "|".join(map(re.escape, ROOT_PAGES)) + r"))")


def _relink(app, relative_path, parent_docname, content):
    """``include-read``: links of an included root page (README.md, REPRODUCTION.md, ...) are written
    for the repository root (``docs/x.md``, ``BENCHMARKS.md``); in the site they point at this
    folder's pages, so ``docs/`` is dropped and a root page becomes the page that includes it."""
    if (Path(app.srcdir) / relative_path).resolve().parent == ROOT:
        content[0] = _ROOT_LINK.sub(lambda m: "](" + (ROOT_PAGES[m.group(1)] if m.group(1) else ""), content[0])


_MD_LINK = re.compile(r"\]\(([^)\s#:]+)(#[^)\s]*)?\)")
_NOTEBOOK_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#:]*\.ipynb)\)")


def _relink_page(app, docname, source):
    """``source-read``: a page of this folder that links a root page (``../REPRODUCTION.md`` from
    ``docs/``, ``../../REPRODUCTION.md`` from ``docs/results/``: the links a code host follows) links,
    in the site, the page that includes it; a link to a notebook (``../notebooks/X.ipynb``) links its
    page in the gallery."""
    here = (Path(app.srcdir) / docname).parent

    def swap(m):
        target = (here / m.group(1)).resolve()
        if target.parent == ROOT and target.name in ROOT_PAGES:
            page = (Path(app.srcdir) / ROOT_PAGES[target.name])
            return "](" + os.path.relpath(page, here) + (m.group(2) or "") + ")"
        return m.group(0)

    def notebook(m):  # the gallery's page of it, named as a document (a path would follow docs/notebooks'
        # link out of the source folder)
        target = (here / m.group(2)).resolve()
        if target.parent == ROOT / "notebooks" and target.suffix == ".ipynb" and "`" not in m.group(1):
            return "{doc}`" + m.group(1) + " </notebooks/" + target.stem + ">`"
        return m.group(0)

    source[0] = _MD_LINK.sub(swap, _NOTEBOOK_LINK.sub(notebook, source[0]))


#: ``|x|`` outside backticks: the docstrings' notation for an absolute value or a set's size, never
#: a reStructuredText substitution (ldpopt defines none), so it is escaped before rendering
_BARS = re.compile(r"(?<![\\|])\|(?=[^\s|])([^|`]*?[^\s|\\])\|(?![_|])")
_CODE = re.compile(r"(``.+?``|:\w+:`[^`]+`|`[^`]+`)")


def _escape_bars(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring``: escape ``|x|`` outside code spans and math roles, so that
    ``max|f − f*|`` renders as written rather than as an undefined substitution."""
    for i, line in enumerate(lines):
        if "|" in line:
            parts = _CODE.split(line)
            lines[i] = "".join(p if k % 2 else _BARS.sub(r"\\|\1\\|", p) for k, p in enumerate(parts))


def _kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    return "function" if callable(obj) else "data"


def _homes() -> dict[int, str]:
    """For every documented class or function, the one full name it is described under: among the
    public names that reach it, the shortest whose module contains where it is defined
    (``ldpopt.oracles.CMS``, not a reader module's re-export; ``ldpopt.problems.Simplex``, not
    ``ldpopt.problems.constraints.base.Simplex``); the other names link there."""
    seen: dict[int, list[str]] = {}

    def walk(module: str) -> None:
        for name, obj in _public(module):
            if inspect.ismodule(obj):
                walk(obj.__name__)
            elif inspect.isclass(obj) or inspect.isfunction(obj):
                seen.setdefault(id(obj), []).append(f"{module}.{name}")
                objs[id(obj)] = obj

    objs: dict[int, object] = {}
    for m in ldpopt.SUBMODULES:
        walk(f"ldpopt.{m}")

    def score(obj, full: str) -> tuple[bool, int]:
        where, module = getattr(obj, "__module__", "") + ".", full.rsplit(".", 1)[0] + "."
        return (where.startswith(module), -len(full))

    return {key: max(fulls, key=lambda f: score(objs[key], f)) for key, fulls in seen.items()}


def _entries(module: str, homes: dict[int, str]) -> list[str]:
    out = []
    for name, obj in _public(module):
        full, kind = f"{module}.{name}", _kind(obj)
        if kind == "module":
            title = f"``{obj.__name__}``"
            out += [title, "-" * len(title), "", f".. automodule:: {obj.__name__}", "   :no-members:", ""]
            out += _entries(obj.__name__, homes)
        elif kind != "data" and homes.get(id(obj), full) != full:
            out += [f".. py:{'class' if kind in ('class', 'exception') else 'function'}:: {full}", "   :no-index:", "",
                    f"   The same object as :py:obj:`{homes[id(obj)]}`.", ""]
        else:
            out += [f".. auto{kind}:: {full}"] + (["   :members:"] if kind in ("class", "exception") else []) + [""]
    return out


def _module_page(module: str, homes: dict[int, str]) -> str:
    title = f"``{module}``"
    out = [title, "=" * len(title), "", f".. automodule:: {module}", "   :no-members:", "",
           f".. currentmodule:: {module}", "", ".. autosummary::", ""]
    # constants are left out of the summary table (autosummary would show their type's docstring)
    out += [f"   {name}" for name, obj in _public(module) if _kind(obj) != "data"] + [""]
    return "\n".join(out + _entries(module, homes))


def _write_api(app) -> None:
    """``builder-inited``: write api/ (one page per public module of ``ldpopt.SUBMODULES``, every name
    of its ``__all__``, and an index page); a file is rewritten only when its text changed, so an
    incremental build re-reads only what changed."""
    api = HERE / "api"
    api.mkdir(exist_ok=True)
    homes = _homes()
    pages = {f"ldpopt.{m}": _module_page(f"ldpopt.{m}", homes) for m in ldpopt.SUBMODULES}
    top = ["API reference", "=============", "",
           "Every public name of ldpopt, generated from the docstrings: one page per module of",
           "``ldpopt.SUBMODULES``, listing its ``__all__``. The names ``import ldpopt`` offers directly:", "",
           ".. currentmodule:: ldpopt", "", ".. list-table::", ""]
    for name in ldpopt.__all__:
        if name == "__version__":
            continue
        module, attr = ldpopt._LAZY[name]
        target = f"ldpopt.{module}" + (f".{attr}" if attr else "")
        role = "mod" if attr is None else "obj"
        top.append(f"   * - ``ldpopt.{name}``\n     - :py:{role}:`{target}`")
    top += ["", ".. toctree::", "   :maxdepth: 1", ""] + [f"   {p}" for p in pages] + [""]
    pages["index"] = "\n".join(top)
    for stem, text in pages.items():
        path = api / f"{stem}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _write_api)
    app.connect("include-read", _relink)
    app.connect("source-read", _relink_page)
    app.connect("autodoc-process-docstring", _escape_bars)
    return {"parallel_read_safe": True}
