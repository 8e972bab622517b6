"""The documentation site as a reader gets it: ``make docs``'s build (``-W``: a warning fails it) into a
temporary folder, every internal link, anchor and image of the built HTML resolved (no network), and
four pages opened in headless Chromium (Debian's ``chromium``): the home page, ``Problem``'s API page,
a notebook with its figure, and the search results for ``Problem.solve`` (the search runs in
JavaScript: ``--dump-dom`` after ``--virtual-time-budget`` has its results). Screenshots go to
``docs/_build/screenshots/`` for a developer to look at.

Skips with the reason when the ``docs`` extra (Sphinx) is not installed, and the browser checks when
no Chromium binary exists (``.ci/run`` installs it). Cost: the build, about 18 s of CPU, and about
1 s per browser page.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "docs" / "_build" / "screenshots"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
PROBLEM_PAGE = "api/ldpopt.problems.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site, built once per test run: pytest-xdist's workers share the folder above their
    own temporary folders, and the first to take the lock builds there."""
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip("the docs extra (Sphinx) is not installed: pip install '.[docs]'")
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "docs-site"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "built").exists():
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
            proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                                   "-d", str(shared / "doctrees"), "docs", str(shared / "html")],
                                  cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, f"make docs failed:\n{proc.stderr[-6000:]}"
            assert "WARNING" not in proc.stderr, proc.stderr[-3000:]
            (shared / "built").touch()
    return shared / "html"


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str]] = []  # (tag, url)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and not (tag == "link" and key == "href" and a.get("rel") in ("preconnect",)):
                self.refs.append((tag, a[key]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _pages(html: Path) -> list[Path]:
    """The site's pages (not the theme's template fragments under _static/)."""
    return [p for p in html.rglob("*.html") if p.relative_to(html).parts[0] not in ("_static", "_sources")]


def broken_links(html: Path) -> list[str]:
    """Every internal href/src of the HTML files under ``html`` that does not resolve: a missing file,
    or an anchor that the target page does not define. External URLs are not followed."""
    pages = {p: _parse(p) for p in _pages(html)}
    bad = []
    for path, page in pages.items():
        for tag, url in page.refs:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue  # http(s), mailto, data: not checked here
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append(f"{path.relative_to(html)}: {tag} {url} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    bad.append(f"{path.relative_to(html)}: {tag} {url} (no such anchor)")
    return bad


def test_link_checker_finds_a_broken_link_and_anchor(tmp_path):
    (tmp_path / "a.html").write_text('<p id="x"><a href="a.html#x">ok</a><a href="b.html">gone</a>'
                                     '<a href="#y">no anchor</a><img src="i.png"><a href="https://e.org">ext</a></p>')
    (tmp_path / "i.png").write_bytes(b"\x89PNG")
    assert broken_links(tmp_path) == ["a.html: a b.html (no such file)", "a.html: a #y (no such anchor)"]


def test_built_site_links_anchors_and_images_resolve(site):
    pages = _pages(site)
    assert len(pages) > 40, len(pages)
    assert broken_links(site) == []


def test_api_reference_lists_every_public_name(site):
    from ldpopt._public import walk

    ids = set()
    for page in (site / "api").glob("*.html"):
        ids |= _parse(page).ids
    # every name of an __all__ is described on its module's page, or (a re-export) the same object is
    # described under another public name, its home module's
    by_object: dict[int, list[str]] = {}
    for full, obj in walk():
        by_object.setdefault(id(obj), []).append(full)
    top = {full for full, _ in walk() if "." not in full.removeprefix("ldpopt.").split(".", 1)[1]}
    names = [n for group in by_object.values() for n in group if n in top]
    missing = [n for group in by_object.values() if not set(group) & ids for n in group if n in top]
    assert len(names) > 250 and missing == [], missing[:20]


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--virtual-time-budget=5000", *args], capture_output=True, text=True, timeout=120)


needs_browser = pytest.mark.skipif(BROWSER is None, reason="no chromium binary (apt-get install chromium)")


def _look(site: Path, page: str, shot: str, height: int = 1400) -> str:
    """Screenshot of ``page`` into SHOTS/``shot`` (checked to be a PNG) and its rendered DOM. A page
    with an anchor is shot inside a full-window frame (headless Chromium's screenshot of a page
    scrolled to an anchor comes out blank; a frame scrolls inside itself)."""
    path = page.split("#")[0].split("?")[0]
    url = (site / path).as_uri() + page[len(path):]
    SHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shown = url
        if "#" in page:
            frame = Path(tmp) / "frame.html"
            frame.write_text(f"<html><body style='margin:0'><iframe src='{url}' "
                             f"style='border:0;width:1280px;height:{height}px'></iframe></body></html>", encoding="utf-8")
            shown = frame.as_uri()
        _chromium(f"--window-size=1280,{height}", f"--screenshot={SHOTS / shot}", shown)
    png = (SHOTS / shot).read_bytes()
    # a blank page compresses to a few kB; every page checked here shows text
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000, (shot, len(png))
    dom = _chromium("--dump-dom", url)
    assert dom.returncode == 0 and "<body" in dom.stdout, dom.stderr[-2000:]
    return dom.stdout


@needs_browser
def test_home_page_renders(site):
    dom = _look(site, "index.html", "home.png")
    assert "post-processes frequency estimates" in dom and 'href="getting-started.html"' in dom
    assert 'href="api/index.html"' in dom and 'href="gallery.html"' in dom


@needs_browser
def test_problem_api_page_renders(site):
    dom = _look(site, f"{PROBLEM_PAGE}#ldpopt.problems.Problem", "api_problem.png")
    for anchor in ("ldpopt.problems.Problem", "ldpopt.problems.Problem.solve"):
        assert f'id="{anchor}"' in dom, anchor
    assert "Examples" in dom and "LDPOPT-STRUCTURED" in dom


@needs_browser
def test_notebook_page_shows_its_figure(site):
    page = "notebooks/01_cls_mle_equivalence.html"
    text = (site / page).read_text(encoding="utf-8")
    before = text[:text.index("<img")]  # shoot the section that holds the first figure
    anchor = re.findall(r'<section id="([^"]+)"', before)[-1]
    dom = _look(site, f"{page}#{anchor}", "notebook.png", height=3000)  # down to the figure
    srcs = [url for tag, url in _parse_text(dom).refs if tag == "img" and not url.startswith("data:")]
    assert srcs, "no figure on the notebook page"
    for src in srcs:
        path = (site / page).parent / unquote(urlsplit(src).path)
        assert path.read_bytes()[:4] in (b"\x89PNG", b"<svg", b"<?xm"), src


def _parse_text(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


@needs_browser
def test_search_finds_problem_solve(site):
    dom = _look(site, "search.html?q=Problem.solve", "search.png")
    links = [url for tag, url in _parse_text(dom).refs if tag == "a"]
    assert f"{PROBLEM_PAGE}#ldpopt.problems.Problem.solve" in links, [u for u in links if "api/" in u][:10]
