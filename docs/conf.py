"""Sphinx configuration of ldpopt's documentation site (``make docs``; DESIGN.md, "docs/").

The guide is the Markdown pages of this folder (MyST), the root pages (README, REPRODUCTION,
BENCHMARKS, RELIABILITY, DESIGN) are included by thin pages here, the notebooks are rendered by
myst-nb with their committed outputs (never executed here: the test suite re-executes them), and the
API reference is generated at build time from ``ldpopt.SUBMODULES`` and each module's ``__all__``
(``_write_api``), so it lists every public name and cannot drift from the code: one page per module
and one per public class or function.

The site has five sections, the root toctree's entries (the header's links; each page's sidebar is its
section's tree): the user guide (``user-guide.md``), the examples (``gallery.md``, a thumbnail of each
notebook's first figure, ``_thumbs``), the API (``api/index``), the results (``results.md``) and
development (``development.md``). A figure a page links (``[NDSS Fig. 4](figures/x.png)``, as a code
host follows it) is shown on that page: the link goes to the figure, drawn under "Figures" at the
page's end (``_show_figures``). The maths (``$...$``, ``$$...$$``, ``:math:``) is typeset by MathJax 3
from the ``docs`` extra (sphinx-mathjax-offline's one-file SVG build, copied into the site's
``_static``): no network at build or view time. Any Python warning raised while the site is built is
an error (numpydoc reports a section it drops with one), as Sphinx's own warnings are under ``-W``.
"""

from __future__ import annotations

import base64
import importlib.metadata
import inspect
import io
import json
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # document this checkout's ldpopt

import ldpopt
from ldpopt._public import entries as _public

project = "ldpopt"
author = "the ldpopt authors"
copyright = "the ldpopt authors, MIT licence"
version = release = ldpopt.__version__

# a Python warning during the build (numpydoc's "Unknown section ...", ldpopt's own deprecations, ...) is
# an error, so that -W fails on it as on Sphinx's own; the build tools' notices of their own deprecated
# internals (Sphinx's RemovedInSphinxXXWarning raised inside MyST, ...) are theirs, not the site's
warnings.simplefilter("error")
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=PendingDeprecationWarning)
warnings.filterwarnings("error", category=DeprecationWarning, module=r"ldpopt(\.|$)")

extensions = [
    "myst_nb",  # MyST Markdown pages and the notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_copybutton",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_thumbs", "figures/**/*.md", "notebooks/.ipynb_checkpoints"]
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

#: MathJax 3, one file with its fonts (SVG output), from the docs extra's sphinx-mathjax-offline; copied
#: into _static/mathjax/ when the site is built (``_copy_mathjax``)
MATHJAX = "tex-svg.js"
mathjax_path = f"mathjax/{MATHJAX}"


def _mathjax_source() -> Path:
    try:
        dist = importlib.metadata.distribution("sphinx-mathjax-offline")
    except importlib.metadata.PackageNotFoundError:
        raise RuntimeError("the docs need MathJax from the docs extra: pip install 'ldpopt[docs]' "
                           "(sphinx-mathjax-offline, pinned in requirements.lock)") from None
    path = Path(str(dist.locate_file(f"sphinx-mathjax-offline/static/mathjax/{MATHJAX}")))
    if not path.is_file():
        raise RuntimeError(f"sphinx-mathjax-offline has no {MATHJAX} at {path}")
    return path


html_theme = "pydata_sphinx_theme"
html_title = f"ldpopt {release}"
html_theme_options = {
    "navbar_end": ["search-button", "theme-switcher"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # the five sections of the root toctree, all in the header (no "More" menu)
    "header_links_before_dropdown": 6,
    "show_nav_level": 1,
    # the sidebar holds the page's own branch of its section, not every branch: the API section's full
    # tree was 457 links and 96 kB on each of its 458 pages (79 MB of site); collapsed, 57 links and
    # 11 kB on fit_table's page (42 MB), and the same build time
    "collapse_navigation": True,
}
# the home page is the map of the sections: no sidebar there; every other page has its section's
html_sidebars = {"index": []}
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


def _object_page(full: str, obj) -> str:
    """The page of one public class or function (its home name, ``_homes``): the object with its
    members."""
    module, name = full.rsplit(".", 1)
    kind = _kind(obj)
    title = f"``{name}``"
    out = [title, "=" * len(title), "", f".. currentmodule:: {module}", "", f".. auto{kind}:: {full}"]
    out += ["   :members:"] if kind in ("class", "exception") else []
    return "\n".join(out + [""])


def _module_pages(module: str, homes: dict[int, str], pages: dict[str, str]) -> None:
    """Add to ``pages`` the page of ``module`` (its docstring, a summary table of its public names, its
    constants, and the names it re-exports pointing at their home) and, under it, a page per class or
    function it is the home of and per public submodule."""
    title = f"``{module}``"
    out = [title, "=" * len(title), "", f".. automodule:: {module}", "   :no-members:", "",
           f".. currentmodule:: {module}", "", ".. autosummary::", ""]
    entries = list(_public(module))
    # constants are left out of the summary table (autosummary would show their type's docstring)
    out += [f"   {name}" for name, obj in entries if _kind(obj) != "data"] + [""]
    children, rest = [], []
    for name, obj in entries:
        full, kind = f"{module}.{name}", _kind(obj)
        if kind == "module":
            if obj.__name__.startswith(module + "."):
                children.append(obj.__name__)
                _module_pages(obj.__name__, homes, pages)
            else:
                rest += [f"* ``{full}`` is the module :py:mod:`{obj.__name__}`.", ""]
        elif kind == "data":
            rest += [f".. autodata:: {full}", ""]
        elif homes.get(id(obj), full) != full:
            rest += [f".. py:{'class' if kind in ('class', 'exception') else 'function'}:: {full}", "   :no-index:", "",
                     f"   The same object as :py:obj:`{homes[id(obj)]}`.", ""]
        else:
            children.append(full)
            pages[full] = _object_page(full, obj)
    if rest:
        out += ["Also here", "---------", ""] + rest
    if children:
        out += [".. toctree::", "   :hidden:", ""] + [f"   {c}" for c in children] + [""]
    pages[module] = "\n".join(out)


def _write_api(app) -> None:
    """``builder-inited``: write api/ (a page per public module of ``ldpopt.SUBMODULES`` and per public
    submodule, a page per public class or function, and an index page); a file is rewritten only
    when its text changed, so an incremental build re-reads only what changed, and a page no longer
    generated is removed."""
    api = HERE / "api"
    api.mkdir(exist_ok=True)
    homes = _homes()
    pages: dict[str, str] = {}
    for m in ldpopt.SUBMODULES:
        _module_pages(f"ldpopt.{m}", homes, pages)
    top = ["API reference", "=============", "",
           "Every public name of ldpopt, generated from the docstrings: a page per module of",
           "``ldpopt.SUBMODULES`` listing its ``__all__``, and a page per public class or function.",
           "The names ``import ldpopt`` offers directly:", "",
           ".. currentmodule:: ldpopt", "", ".. list-table::", ""]
    for name in ldpopt.__all__:
        if name == "__version__":
            continue
        module, attr = ldpopt._LAZY[name]
        target = f"ldpopt.{module}" + (f".{attr}" if attr else "")
        role = "mod" if attr is None else "obj"
        top.append(f"   * - ``ldpopt.{name}``\n     - :py:{role}:`{target}`")
    top += ["", "The modules:", "", ".. toctree::", "   :maxdepth: 1", ""]
    top += [f"   ldpopt.{m}" for m in ldpopt.SUBMODULES] + [""]
    pages["index"] = "\n".join(top)
    for stem, text in pages.items():
        path = api / f"{stem}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for path in api.glob("*.rst"):
        if path.stem not in pages:
            path.unlink()


#: What each method page quotes from the results pages: the measured regimes (when to use a method and
#: when not), one table per registered method; the rest of a page comes from the method's record.
REGIMES = HERE / "method-regimes.toml"
#: The pages a method page links as its results: the measurement pages, the root pages they include, and
#: the guide's page on central noise, whose tables measure the deployed releases (Clip-Round, NNLS-Round).
RESULTS_PAGES = {**{f"../results/{p.stem}.md": p for p in sorted((HERE / "results").glob("*.md"))},
                 "../reproduction.md": ROOT / "REPRODUCTION.md", "../benchmarks.md": ROOT / "BENCHMARKS.md",
                 "../privacy.md": HERE / "privacy.md"}


def _mentions(text: str, name: str, label: str) -> int:
    """How often ``text`` names the method: its display name as a word of its own (``Norm`` is not
    ``Norm-Sub``'s prefix, ``Power`` not ``PowerNS``'s) or its registry name in backticks."""
    word = re.compile(r"(?<![\w-])" + re.escape(label) + r"(?![\w-]|\.\w)")
    return len(word.findall(text)) + text.count(f"`{name}`")


def method_example(name: str) -> str:
    """A script that runs the method ``name`` on a small simulated estimate (OUE, or GRR where the
    method does not apply to OUE's; declared ordered where the method needs an order) and prints the
    consistency of its answer and its error against the truth beside the raw estimate's."""
    import numpy as np

    from ldpopt import datasets, methods, oracles

    info = methods.get(name)
    data = datasets.load("zipf", n=100_000, d=64, s=1.5, rng=1)
    oracle = "oue"
    probe = oracles.get(oracle, epsilon=1.0, d=data.d).estimate(np.asarray(data.counts) // 2, data.n)
    if info.why_not(probe.as_ordered() if info.needs_order else probe) is not None:
        oracle = "grr"
    lines = ["import numpy as np", "import ldpopt", "from ldpopt import datasets, oracles", "",
             'data = datasets.load("zipf", n=100_000, d=64, s=1.5, rng=1)  # a skewed histogram of 64 values',
             f'est = oracles.get("{oracle}", epsilon=1.0, d=data.d).simulate(data.counts, rng=0)']
    if info.needs_order:
        lines.append("est = est.as_ordered()  # the method assumes the values' order is meaningful")
    lines += [f'f = ldpopt.postprocess(est, "{name}")',
              'print("sum", f.sum().round(4), "smallest", f.min().round(4))',
              'print("MSE", np.mean((f - data.frequencies) ** 2), "raw estimate\'s MSE",',
              '      np.mean((est.f_tilde - data.frequencies) ** 2))']
    return "\n".join(lines) + "\n"


def _method_page(name: str, regimes: dict, texts: dict[str, str]) -> str:
    """The page of one registered method: its record (``ldpopt.methods.get``), its function's
    docstring (the function's API entry), the problem it claims to solve, when to use it and when not
    (``REGIMES``), a runnable example and the results pages that name it."""
    from ldpopt import methods

    info = methods.get(name)
    func = f"{info.func.__module__}.{info.func.__qualname__}"
    out = [f"(method-{name})=", f"# {info.label}", ""]
    # a main index entry per spelling: the site's search ranks an exact index entry above any page text
    out += [f":::{{index}} ! {entry}\n:::\n" for entry in {e.lower(): e for e in (name, info.label)}.values()]
    out += [(f"{info.description}. Run it with `ldpopt.postprocess(estimate, \"{name}\")` "
            f"({{py:func}}`API <ldpopt.methods.postprocess>`; its record: `ldpopt.methods.get(\"{name}\")`, "
            f"{{py:class}}`API <ldpopt.methods.MethodInfo>`; the function: {{py:func}}`{func}`)."), ""]
    rows = [("name", f"`{name}`"), ("family", info.family or "not declared"),
            ("non-negative", info.non_negative), ("sums to one", info.sums_to_one),
            ("order preserving", info.order_preserving), ("cost", info.complexity),
            ("source", info.reference)]
    if info.needs_order:
        rows.append(("domain", "ordered (`Estimate.as_ordered`)"))
    if info.variant_of:
        rows.append(("computes", f"[{methods.get(info.variant_of).label}]({info.variant_of}.md)'s answer another way"))
    out += ["| | |", "| --- | --- |"] + [f"| {k} | {v.replace('|', chr(92) + '|')} |" for k, v in rows] + [""]
    if info.notes:
        out += [info.notes, ""]
    out += ["## What it computes", "", "```{eval-rst}", f".. autofunction:: {func}", "```", ""]
    if info.problem is not None:
        out += ["## The problem it solves", "",
                (f"{info.problem.statement}. `ldpopt.testing.check_method(\"{name}\")` checks the claim "
                f"`{name}={info.problem.name}` with the problem layer's certificate "
                "([problems](../problems.md))."), ""]
    out += ["## When to use it", "", regimes["use"].strip(), "", "## When not", "", regimes["avoid"].strip(), "",
            "## Example", "", "```python", method_example(name).rstrip("\n"), "```", ""]
    found = sorted(((_mentions(text, name, info.label), link) for link, text in texts.items()), key=lambda x: -x[0])
    found = [(n, link) for n, link in found if n]
    if found:
        out += ["## Results that name it", ""]
        for n, link in found:
            title = next((line[2:].strip() for line in texts[link].splitlines() if line.startswith("# ")), link)
            out.append(f"* [{title}]({link}) ({n} mention{'s' if n > 1 else ''})")
        out.append("")
    return "\n".join(out)


def _methods_outdated(app, env, added, changed, removed) -> list[str]:
    """``env-get-outdated``: the method pages are read again on every build. Sphinx's incremental
    build loads the previous search index without its index entries, so a page not read again would
    lose the entry that ranks it first for its method's name."""
    return sorted(d for d in env.found_docs if d.startswith("methods/"))


def _write_methods(app) -> None:
    """``builder-inited``: write methods/ (a page per method of ``ldpopt.methods.names()``, ``_method_page``,
    and an index page), each file rewritten only when its text changed; a registered method without
    an entry in ``REGIMES`` (or an entry without a method) fails the build."""
    import tomllib

    from ldpopt import methods

    regimes = tomllib.loads(REGIMES.read_text(encoding="utf-8"))
    names = methods.names()
    if set(regimes) != set(names):
        raise RuntimeError(f"{REGIMES.name}: no entry for {sorted(set(names) - set(regimes))}, "
                           f"no method for {sorted(set(regimes) - set(names))}")
    texts = {link: path.read_text(encoding="utf-8") for link, path in RESULTS_PAGES.items()}
    pages = {name: _method_page(name, regimes[name], texts) for name in names}
    index = ["# Methods", "",
             ("Every registered post-processing method, a page each: what it computes, the problem it solves, "
             "when to use it and when not (what the [results](../results.md) measured), and an example. "
             "`ldpopt.methods.available()` prints the same records as a table."), "",
             "| method | name | family | what it does |", "| --- | --- | --- | --- |"]
    for name in names:
        info = methods.get(name)
        index.append(f"| [{info.label}]({name}.md) | `{name}` | {info.family or ''} | {info.description} |")
    index += ["", ":::{toctree}", ":hidden:", ""] + names + [":::", ""]
    pages["index"] = "\n".join(index)
    folder = HERE / "methods"
    folder.mkdir(exist_ok=True)
    for stem, text in pages.items():
        path = folder / f"{stem}.md"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for path in folder.glob("*.md"):
        if path.stem not in pages:
            path.unlink()


_FIGURE_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s#:]+\.(?:png|svg|jpg))\)")


_FIGURE_NAMED = re.compile(r"(?<!`)`docs/(figures/[^`\s{}]+\.(?:png|svg|jpg))`")


def _show_figures(text: str, page: str) -> str:
    """A page's links to figures (``[NDSS Fig. 4](figures/x.png)``: a code host follows them, the
    site would only offer a download) go to the figure itself, drawn under a "Figures" section at the
    page's end, each figure once, with the names its links gave it; a figure the page names as a
    repository path (```docs/figures/x.png```) is drawn there too, the path linking to it."""
    here = (HERE / page).parent
    found: dict[str, list[str]] = {}
    for label, path in _FIGURE_LINK.findall(text):
        found.setdefault(path, [])
        if label not in found[path]:
            found[path].append(label)
    named = {m: os.path.relpath(HERE / m, here) for m in _FIGURE_NAMED.findall(text) if (HERE / m).is_file()}
    for path in named.values():
        found.setdefault(path, [])
    if not found:
        return text
    slug = re.sub(r"[^a-z0-9]+", "-", page.lower())

    def target(path: str) -> str:
        return f"fig-{slug}-{re.sub(r'[^a-z0-9]+', '-', Path(path).stem.lower())}"

    text = _FIGURE_LINK.sub(lambda m: "{ref}`" + m.group(1).replace("`", "") + " <" + target(m.group(2)) + ">`", text)
    text = _FIGURE_NAMED.sub(lambda m: ("{ref}`docs/" + m.group(1) + " <" + target(named[m.group(1)]) + ">`")
                             if m.group(1) in named else m.group(0), text)
    out = [text.rstrip("\n"), "", "## Figures", "",
           "The figures this page names, in the order it first names them.", ""]
    for path, labels in found.items():
        caption = f"{'; '.join(labels)} (`{Path(path).name}`)" if labels else f"`{Path(path).name}`"
        out += [f"({target(path)})=", f":::{{figure}} {path}", f":alt: {labels[0] if labels else Path(path).stem}",
                ":width: 100%", "", caption, ":::", ""]
    return "\n".join(out)


def _notebook_thumbnail(notebook: Path, out: Path, width: int = 480) -> bool:
    """The first PNG output of ``notebook`` (as committed), scaled to ``width`` pixels, into ``out``;
    False when the notebook has none."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            if data:
                from PIL import Image  # matplotlib's dependency

                image = Image.open(io.BytesIO(base64.b64decode("".join(data))))
                image.thumbnail((width, width))
                out.parent.mkdir(parents=True, exist_ok=True)
                buffer = io.BytesIO()
                image.save(buffer, format="PNG")
                if not out.exists() or out.read_bytes() != buffer.getvalue():
                    out.write_bytes(buffer.getvalue())
                return True
    return False


def _gallery(app) -> str:
    """The gallery's cards: each notebook's thumbnail (its first figure), its title linking its
    rendered page, and a download link to the ``.ipynb``."""
    thumbs = HERE / "_thumbs"
    cards = ["::::{container} ldpopt-gallery", ""]
    for notebook in sorted((HERE / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        title = next((line.lstrip("# ").strip() for c in cells if c["cell_type"] == "markdown"
                      for line in "".join(c["source"]).splitlines() if line.startswith("# ")), notebook.stem)
        cards += [":::{container} ldpopt-card", ""]
        if _notebook_thumbnail(notebook, thumbs / f"{notebook.stem}.png"):
            cards += [f"```{{image}} _thumbs/{notebook.stem}.png", f":alt: the first figure of {notebook.stem}",
                      f":target: notebooks/{notebook.stem}.html", "```", ""]
        title = title.replace("<", "\\<").replace("`", "")
        cards += [f"{{doc}}`{title} <notebooks/{notebook.stem}>`", "",
                  f"{{download}}`Download the notebook <notebooks/{notebook.name}>`", "", ":::", ""]
    return "\n".join(cards + ["::::", ""])


def _page_hooks(app, docname, source) -> None:
    """``source-read``: the root-page links (``_relink_page``), the figures shown (``_show_figures``)
    and, on the gallery page, its cards."""
    _relink_page(app, docname, source)
    source[0] = _show_figures(source[0], docname)
    if docname == "gallery":
        source[0] = source[0].replace("<!-- gallery cards -->", _gallery(app))


def _include_hooks(app, relative_path, parent_docname, content) -> None:
    """``include-read``: an included root page's links (``_relink``) and its figures shown."""
    _relink(app, relative_path, parent_docname, content)
    content[0] = _show_figures(content[0], parent_docname)


def _copy_mathjax(app, exc) -> None:
    """``build-finished``: MathJax into the site's ``_static`` (``mathjax_path``)."""
    if exc is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / "mathjax"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_MATHJAX, target / MATHJAX)


_MATHJAX = _mathjax_source()


def _numpydoc_template_once(app) -> None:
    """``builder-inited``: numpydoc's docstring template compiled once per build. numpydoc's own
    ``get_doc_object`` makes a new Jinja environment and compiles ``numpydoc_docstring.rst`` for every
    object it renders (3,022 compilations here); this one compiles the same template through the same
    loader (the builder's, with numpydoc's templates folder) once, and renders each object with
    numpydoc's own classes, as its ``get_doc_object`` does. It is installed as numpydoc's
    ``setup(get_doc_object_=...)`` installs one (numpydoc's module global). Measured: the same site,
    file for file, in 61.2 s of CPU against 66.0 s."""
    from jinja2.sandbox import SandboxedEnvironment
    from numpydoc import docscrape_sphinx as ds
    from numpydoc import numpydoc as nd
    from sphinx.jinja2glue import BuiltinTemplateLoader

    loader = BuiltinTemplateLoader()
    loader.init(app.builder, dirs=[os.path.join(os.path.dirname(ds.__file__), "templates")])
    template = SandboxedEnvironment(loader=loader).get_template("numpydoc_docstring.rst")

    def get_doc_object(obj, what=None, doc=None, config=None, builder=None):
        config = {} if config is None else config
        config["template"] = template
        return ds.get_doc_object_orig(obj, what=what, doc=doc, config=config, class_doc=ds.SphinxClassDoc,
                                      func_doc=ds.SphinxFunctionDoc, obj_doc=ds.SphinxObjDoc)

    nd.get_doc_object = get_doc_object


def setup(app):
    app.connect("builder-inited", _numpydoc_template_once)
    app.connect("builder-inited", _write_api)
    app.connect("builder-inited", _write_methods)
    app.connect("env-get-outdated", _methods_outdated)
    app.connect("include-read", _include_hooks)
    app.connect("source-read", _page_hooks)
    app.connect("build-finished", _copy_mathjax)
    app.connect("autodoc-process-docstring", _escape_bars)
    return {"parallel_read_safe": True}
