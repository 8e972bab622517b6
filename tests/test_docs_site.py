"""The documentation site as a reader gets it: ``make docs``'s build (``-W``: a warning fails it) into a
temporary folder, every internal link, anchor and image of the built HTML resolved (no network), a
section sidebar on every page but the home page, and pages opened in headless Chromium (Debian's
``chromium``): the home page, ``Problem``'s API page, a notebook with its figure, the search results
for ``Problem.solve`` and for a method's name (the search runs in JavaScript: the DOM read after 5 s
of the page's virtual time has its results; every registered method's names are searched at once by
the site's own search code in one page, ``search_results``, and its page must come first), the
formulas the prose writes as text (``unmarked_formulas``, on the built HTML), and guide, results and notes pages at desktop (1280, 1920
px) and phone (390 px) widths, measured in the browser: the header inside the window with no "More"
menu, the sidebar shown (behind its toggle on a phone), the page's contents column ("On this page")
not wider than its box, the maths typeset by MathJax from the site's
own ``_static`` and the figures drawn. Screenshots go to ``docs/_build/screenshots/`` for a developer
to look at. One Chromium per test process serves every page (:class:`_Browser`, the DevTools
protocol on a pipe).

Skips with the reason when the ``docs`` extra (Sphinx) is not installed, and the browser checks when
no Chromium binary exists (``.ci/run`` installs it). Cost: the build, about 75 s of CPU (a page per
public class or function: about 560 pages), and 1-2 s of CPU per browser page (about 40 here; 6 s
for ``notes/python.html``, MathJax's 1,400 formulas).
"""

from __future__ import annotations

import atexit
import contextlib
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
PROBLEM_PAGE = "api/ldpopt.problems.Problem.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site, built once per test run: pytest-xdist's workers share the folder above their
    own temporary folders, and the first to take the lock builds there. ``LDPOPT_DOCS_SITE=DIR``
    checks a site already built into DIR (``make docs``'s ``docs/_build/html``) instead."""
    if os.environ.get("LDPOPT_DOCS_SITE"):
        return Path(os.environ["LDPOPT_DOCS_SITE"])
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
                                  check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
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
    return [p for p in html.rglob("*.html") if p.relative_to(html).parts[0] not in ("_static", "_sources")
            and not p.name.startswith("_measure_")]   # another worker's layout probe, there for seconds


def parsed_pages(html: Path) -> dict[Path, _Page]:
    """``_parse`` of every page of ``html`` (``_pages``), each parsed once per test run and shared by
    the tests that read the built site (the site is not written after its build)."""
    key = html.resolve()
    if key not in _PARSED:
        _PARSED[key] = {p: _parse(p) for p in _pages(html)}
    return _PARSED[key]


_PARSED: dict[Path, dict[Path, _Page]] = {}


def broken_links(html: Path, pages: dict[Path, _Page] | None = None) -> list[str]:
    """Every internal href/src of the HTML files under ``html`` (parsed: ``pages``, by default parsed
    here) that does not resolve: a missing file, or an anchor that the target page does not define.
    External URLs are not followed. A link is resolved once per folder (a page's sidebar repeats the
    same links on every page of its folder)."""
    pages = {p: _parse(p) for p in _pages(html)} if pages is None else pages
    bad = []
    found: dict[tuple[Path, str], tuple[Path, bool]] = {}  # (folder, path) -> (target, exists)
    for path, page in pages.items():
        for tag, url in page.refs:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue  # http(s), mailto, data: not checked here
            if not parts.path:
                target, exists = path, True
            else:
                key = (path.parent, parts.path)
                if key not in found:
                    resolved = (path.parent / unquote(parts.path)).resolve()
                    if resolved.is_dir():
                        resolved = resolved / "index.html"
                    found[key] = (resolved, resolved.exists())
                target, exists = found[key]
            if not exists:
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
    pages = parsed_pages(site)
    assert len(pages) > 40, len(pages)
    assert broken_links(site, pages) == []


def test_api_reference_lists_every_public_name(site):
    from ldpopt._public import walk

    ids = set()
    parsed = _PARSED.get(site.resolve(), {})  # the API pages only: parsed here unless already parsed
    for page in (site / "api").glob("*.html"):
        ids |= (parsed.get(page) or _parse(page)).ids
    # every name of an __all__ is described on its module's page, or (a re-export) the same object is
    # described under another public name, its home module's
    by_object: dict[int, list[str]] = {}
    for full, obj in walk():
        by_object.setdefault(id(obj), []).append(full)
    top = {full for full, _ in walk() if "." not in full.removeprefix("ldpopt.").split(".", 1)[1]}
    names = [n for group in by_object.values() for n in group if n in top]
    missing = [n for group in by_object.values() if not set(group) & ids for n in group if n in top]
    assert len(names) > 250 and missing == [], missing[:20]


class _Browser:
    """One headless Chromium per test process, driven over the DevTools protocol on a pipe
    (``--remote-debugging-pipe``: the commands on the child's fd 3, the replies on fd 4, each a JSON
    text ending in a NUL byte; no network port). Each page opens in a tab of its own, with the
    window's size set, under the virtual time the command line's ``--virtual-time-budget`` gives (the
    page's timers and MathJax run to completion without waiting in real time), then its DOM and a
    screenshot are read and the tab is closed. Started at the first page and reused: a Chromium
    start costs about 1 s of CPU (half of a small page's), 40 times in this file."""

    def __init__(self, binary: str):
        def high(fd: int) -> int:  # a copy numbered 10 or more: never one of the fds 3 and 4 it moves to
            copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            return copy

        to_child, self._out = map(high, os.pipe())
        self._in, from_child = map(high, os.pipe())
        # bash (dash reads one-digit fds only) moves the pipes to fds 3 and 4, then becomes Chromium
        self.proc = subprocess.Popen(["bash", "-c", f'exec "$@" 3<&{to_child} 4>&{from_child}', "bash", binary,
                                      "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                      "--remote-debugging-pipe", "about:blank"], pass_fds=(to_child, from_child),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer, self._id, self._events = b"", 0, []

    def _message(self, seconds: float) -> dict:
        import json
        import select

        while b"\0" not in self._buffer:
            if not select.select([self._in], [], [], seconds)[0]:
                raise TimeoutError(f"Chromium sent nothing in {seconds} s")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise ConnectionError("Chromium closed its pipe")
            self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(text)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """The result of one DevTools command (events that arrive meanwhile are kept)."""
        import json

        self._id += 1
        os.write(self._out, json.dumps({"id": self._id, "method": method, "params": params,
                                        **({"sessionId": session} if session else {})}).encode() + b"\0")
        while (reply := self._message(60)).get("id") != self._id:
            self._events.append(reply)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def event(self, method: str, session: str) -> dict:
        """The next event ``method`` of tab ``session`` (one kept earlier, or the next to arrive)."""
        for i, e in enumerate(self._events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self._events.pop(i)
        while (e := self._message(60)).get("method") != method or e.get("sessionId") != session:
            self._events.append(e)
        return e

    def look(self, url: str, width: int, height: int, shot: Path | None) -> str:
        """``url`` opened ``width`` x ``height`` px under 5 s of virtual time: its DOM, and its
        screenshot (PNG) written to ``shot``."""
        import base64

        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        tab = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        try:
            self.send("Emulation.setDeviceMetricsOverride", tab, width=width, height=height, deviceScaleFactor=1,
                      mobile=False)
            self.send("Emulation.setVirtualTimePolicy", tab, policy="pause")
            self.send("Page.navigate", tab, url=url)
            self.send("Emulation.setVirtualTimePolicy", tab, policy="pauseIfNetworkFetchesPending", budget=5000)
            self.event("Emulation.virtualTimeBudgetExpired", tab)
            dom = self.send("Runtime.evaluate", tab, expression="document.documentElement.outerHTML",
                            returnByValue=True)["result"]["value"]
            if shot is not None:  # time runs again: a paused clock can leave the frame never drawn
                self.send("Emulation.setVirtualTimePolicy", tab, policy="advance")
                shot.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", tab, format="png")["data"]))
            return dom
        finally:
            self.send("Target.closeTarget", targetId=target)
            self._events = [e for e in self._events if e.get("sessionId") != tab]

    def close(self) -> None:
        with contextlib.suppress(OSError):  # asked, not waited for: a browser that stopped answering is killed
            os.write(self._out, b'{"id": 0, "method": "Browser.close", "params": {}}\0')
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self._out)
        os.close(self._in)


_BROWSER: list[_Browser] = []


def _open(url: str, width: int = 1280, height: int = 900, shot: Path | None = None) -> str:
    """``url``'s DOM (and its screenshot into ``shot``) in this process's Chromium (:class:`_Browser`),
    started at the first call; a browser that died or stopped answering is replaced, once per page."""
    for attempt in (1, 2):
        if _BROWSER and (attempt == 2 or _BROWSER[0].proc.poll() is not None):
            _BROWSER.pop().close()
        if not _BROWSER:
            _BROWSER.append(_Browser(BROWSER))
        try:
            return _BROWSER[0].look(url, width, height, shot)
        except (TimeoutError, ConnectionError):
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


atexit.register(lambda: _BROWSER and _BROWSER.pop().close())


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
        dom = _open(shown, 1280, height, SHOTS / shot)
        if shown != url:  # the page itself, not its frame
            dom = _open(url)
    png = (SHOTS / shot).read_bytes()
    # a blank page compresses to a few kB; every page checked here shows text
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000, (shot, len(png))
    assert "<body" in dom, dom[-2000:]
    return dom


@needs_browser
def test_home_page_renders(site):
    dom = _look(site, "index.html", "home.png")
    assert "post-processes frequency estimates" in dom and 'href="getting-started.html"' in dom
    assert 'href="api/index.html"' in dom and 'href="gallery.html"' in dom
    # the entry points, one card each: install, five lines, the guides, the API, the results
    entries = dom[dom.index("ldpopt-entries"):]
    entries = entries[:entries.index("</ul>")]
    for href in ('href="getting-started.html"', 'href="#five-lines"', 'href="user-guide.html"',
                 'href="api/index.html"', 'href="results.html"'):
        assert href in entries, href


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


def _sidebar_links(path: Path) -> int:
    """How many links the page's primary sidebar (its section's tree) holds."""
    text = path.read_text(encoding="utf-8")
    start = text.find('class="bd-docs-nav')
    if start < 0:
        return 0
    return text[start:text.find("</nav>", start)].count("<a ")


def test_every_page_but_the_home_page_has_its_section_sidebar(site):
    pages = [p for p in _pages(site) if p.name not in ("index.html", "search.html", "genindex.html", "py-modindex.html")
             or p.parent != site]
    empty = sorted(str(p.relative_to(site)) for p in pages if _sidebar_links(p) == 0)
    assert len(pages) > 100 and empty == [], empty[:20]
    # the header holds the five sections, no more
    home = (site / "index.html").read_text(encoding="utf-8")
    header = home[home.index('class="bd-navbar-elements'):]
    header = header[:header.index("</ul>")]
    assert header.count('class="nav-item') == 5 and "dropdown" not in header, header[:2000]


#: measured in the page by a script appended to a copy of it (a file:// page cannot be read from a
#: frame): the header's and its links' boxes, the sidebar, typeset maths and drawn figures
_MEASURE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const w = window.innerWidth, box = e => e.getBoundingClientRect();
  const shown = e => { const r = box(e); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; };
  const header = [...document.querySelectorAll(".bd-header a, .bd-header button")].filter(shown);
  const side = document.querySelector(".bd-sidebar-primary");
  const report = {
    width: w,
    header_outside: header.filter(e => box(e).right > w + 1 || box(e).left < -1).map(e => e.textContent.trim()),
    header_links: [...document.querySelectorAll(".bd-header .navbar-nav > li > a")].filter(shown).length,
    more_menu: [...document.querySelectorAll(".bd-header .navbar-nav .dropdown")].filter(shown).length,
    sidebar_shown: !!side && shown(side) && side.querySelectorAll("nav.bd-docs-nav a").length > 0,
    sidebar_links: side ? side.querySelectorAll("nav.bd-docs-nav a").length : 0,
    sidebar_toggle: [...document.querySelectorAll(".primary-toggle")].filter(shown).length,
    toc_cut: (s => s && shown(s) ? s.scrollWidth - s.clientWidth : 0)(document.querySelector(".bd-sidebar-secondary")),
    code_scroll: [...document.querySelectorAll("div.highlight pre")].filter(p => p.scrollWidth > p.clientWidth + 1).length,
    page_overflow: document.documentElement.scrollWidth - w,
    maths: document.querySelectorAll("mjx-container svg").length,
    maths_left: document.querySelectorAll(".math:not(:has(mjx-container))").length,
    raw_maths: (a => { if (!a) return 0; const w = document.createTreeWalker(a, NodeFilter.SHOW_TEXT); let n = 0, t;
      while ((t = w.nextNode())) if (!t.parentElement.closest("code, pre, script, .math, mjx-container")
        && /[$]|:math:`/.test(t.data)) n++; return n; })(document.querySelector("article.bd-article")),
    mathjax_src: [...document.scripts].map(s => s.src).filter(s => s.includes("mathjax")),
    figures: [...document.querySelectorAll("figure img, img.align-default")].map(i => i.naturalWidth),
  };
  document.body.setAttribute("data-measured", JSON.stringify(report));
  if (window.parent !== window) window.parent.postMessage(JSON.stringify(report), "*");
}, 1500));
</script>"""


def _measure(site: Path, page: str, width: int, shot: str) -> dict:
    """Open ``page`` in a frame ``width`` px wide and 900 px high (headless Chromium's window is at
    least 500 px wide: a phone's width is a frame's), screenshot it, and return what ``_MEASURE``
    found (posted to the frame's parent: a file:// frame cannot be read from outside)."""
    import json

    source = site / page
    tag = f"{os.getpid()}_{width}"   # xdist workers share the site: each call's files its own
    probe = source.with_name(f"_measure_{tag}_{source.name}")
    probe.write_text(source.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    frame = site / f"_measure_frame_{tag}.html"
    frame.write_text(f"<html><body style='margin:0'><iframe src='{probe.as_uri()}' style='border:0;width:{width}px;"
                     "height:900px'></iframe><script>addEventListener('message', e => "
                     "document.body.setAttribute('data-measured', e.data))</script></body></html>", encoding="utf-8")
    try:
        SHOTS.mkdir(parents=True, exist_ok=True)
        dom = _open(frame.as_uri(), max(width, 500), 900, SHOTS / shot)
    finally:
        probe.unlink()
        frame.unlink()
    found = re.search(r'<body[^>]*data-measured="([^"]*)"', dom)
    assert found, (page, width, dom[-2000:])
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


#: pages of each section, each shown at each width (guide, examples, API, results, development)
LAYOUT_PAGES = ("python.html", "gallery.html", PROBLEM_PAGE, "reproduction.html", "notes/python.html")


@needs_browser
@pytest.mark.parametrize("width", [1280, 1920, 390])
@pytest.mark.parametrize("page", LAYOUT_PAGES)
def test_page_layout_in_the_browser(site, page, width):
    got = _measure(site, page, width, f"layout_{page.replace('/', '_').removesuffix('.html')}_{width}.png")
    assert got["width"] == width
    assert got["header_outside"] == [], got
    # nothing widens the page past the window (a wide table scrolls inside itself), and no code block
    # needs sideways scrolling (a long line wraps)
    assert got["page_overflow"] <= 0 and got["code_scroll"] == 0, got
    assert got["more_menu"] == 0, got
    if width >= 1280:
        assert got["header_links"] == 5 and got["sidebar_shown"], got
        # "On this page" holds its entries inside its column (a long code name once cut every entry)
        assert got["toc_cut"] <= 1, got
    else:  # a phone: the sections and the sidebar behind the toggle, which is shown
        assert got["sidebar_toggle"] >= 1 and got["sidebar_links"] > 0, got


@needs_browser
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("page", ["index.html", "cli.html", "extending.html"])
def test_code_fits_and_nothing_widens_the_page(site, page, width):
    """The home page and the two pages with the most code: every code block fits its column (a long
    line wraps) and nothing makes the page wider than the window, at a desktop's and a phone's width."""
    got = _measure(site, page, width, f"fit_{page.removesuffix('.html')}_{width}.png")
    assert got["page_overflow"] <= 0 and got["code_scroll"] == 0, got


@needs_browser
def test_maths_is_typeset_offline_and_figures_are_drawn(site):
    notes = _measure(site, "notes/python.html", 1280, "maths_notes_python.png")
    # MathJax is the site's own copy (no network at view time), and it typeset the derivations
    assert notes["mathjax_src"] and all(s.startswith("file://") for s in notes["mathjax_src"]), notes
    assert (site / "_static" / "mathjax" / "tex-svg.js").stat().st_size > 1_000_000
    assert notes["maths"] >= 5 and notes["maths_left"] == 0, notes
    reproduction = _measure(site, "reproduction.html", 1280, "figures_reproduction.png")
    # the figures the page names are drawn on it (a figure that did not load has width 0)
    assert len(reproduction["figures"]) >= 10 and min(reproduction["figures"]) > 0, reproduction
    text = (site / "reproduction.html").read_text(encoding="utf-8")
    assert "download" not in re.findall(r'<a [^>]*href="[^"]*\.png"[^>]*>', text).__str__()


@needs_browser
def test_search_finds_the_method_pages(site):
    dom = _look(site, "search.html?q=Norm-Sub", "search_method.png")
    results = dom[dom.index('id="search-results"'):]  # the results list, not the page's navigation
    links = {url.split("#")[0].split("?")[0] for tag, url in _parse_text(results).refs if tag == "a"}
    # the guide's page of the methods, their derivations, and the API of postprocess
    for page in ("python.html", "notes/python.html", "api/ldpopt.methods.postprocess.html"):
        assert page in links, (page, sorted(links)[:30])
    # the method's own page first (the search page's list, in its order)
    first = next(url for tag, url in _parse_text(results).refs if tag == "a")
    assert first.split("#")[0] == "methods/norm-sub.html", first


def _method_queries() -> dict[str, str]:
    """Every registered method's names as a reader searches them: the registry name (``norm-sub``),
    the display name (``Norm-Sub``) and the display name in capitals, each with its method."""
    from ldpopt import methods

    return {q: name for name in methods.names() for q in (name, methods.get(name).label, methods.get(name).label.upper())}


def test_every_registered_method_has_its_page(site):
    """A page per method of the registry (docs/conf.py writes them from each method's record, its
    function's docstring and docs/method-regimes.toml): its display name as title, its function's API
    entry, when to use it and when not, an example, the results pages that name it; and the methods'
    index lists every one."""
    import html
    import tomllib

    from ldpopt import methods

    regimes = tomllib.loads((ROOT / "docs" / "method-regimes.toml").read_text(encoding="utf-8"))
    assert sorted(regimes) == sorted(methods.names())
    index = (site / "methods" / "index.html").read_text(encoding="utf-8")
    bad = {}
    for name in methods.names():
        info, page = methods.get(name), site / "methods" / f"{name}.html"
        if not page.exists():
            bad[name] = "no page"
            continue
        text = page.read_text(encoding="utf-8")
        func = f"{info.func.__module__}.{info.func.__qualname__}"
        wanted = [f"<h1>{html.escape(info.label, quote=False)}", f'id="{func}"', 'id="when-to-use-it"',
                  'id="when-not"', 'id="example"', 'id="results-that-name-it"',
                  'class="highlight-python', f'<span class="s2">"{name}"</span>']
        missing = [w for w in wanted if w not in text]
        results = text[text.find('id="results-that-name-it"'):]
        if not re.search(r'href="\.\./(results/[\w-]+|reproduction|benchmarks|privacy)\.html', results):
            missing.append("a link to a results page")
        if missing or f'href="{name}.html"' not in index:
            bad[name] = missing or "not on the index"
    assert len(methods.names()) >= 20 and bad == {}, bad


def test_method_page_examples_run(site):
    """Each method page's example, as the site shows it (its page's source), runs alone and prints
    the consistency and error of the answer."""
    code = []
    for name in sorted(set(_method_queries().values())):
        source = (site / "_sources" / "methods" / f"{name}.md.txt").read_text(encoding="utf-8")
        code.append(re.search(r"```python\n(.*?)```", source, re.DOTALL).group(1))
    runner = ("import contextlib, io, json, sys\nout = []\nfor c in json.load(sys.stdin):\n"
              "    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n"
              "        exec(compile(c, 'example', 'exec'), {'__name__': '__main__'})\n"
              "    out.append(buf.getvalue())\nprint(json.dumps(out))\n")
    import json

    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", runner], input=json.dumps(code), capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = json.loads(proc.stdout.splitlines()[-1])
    assert len(printed) == len(code) and all(p.startswith("sum ") and "MSE" in p for p in printed), printed


@needs_browser
def test_search_ranks_each_method_page_first(site):
    """Searching any registered method's name, display name or display name in capitals lists its
    page first (the site's own search code on the built index, ``search_results``)."""
    queries = _method_queries()
    ranked = search_results(site, list(queries))
    wrong = {q: (search_rank(ranked[q], f"methods/{name}"), list(dict.fromkeys(ranked[q]))[:3])
             for q, name in queries.items() if search_rank(ranked[q], f"methods/{name}") != 1}
    assert len(queries) >= 40 and wrong == {}, wrong



#: run in a copy of the site's own search page: Sphinx's search (searchtools.js, the built index) on
#: each query, the pages in the order the page lists them (``_performSearch`` returns them last-first)
_SEARCH = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const ranks = {};
  for (const q of JSON.parse(document.body.getAttribute("data-queries"))) {
    const parsed = Search._parseQuery(q);
    ranks[q] = Search._performSearch(...parsed).reverse().map(r => r[0]);
  }
  document.body.setAttribute("data-ranked", JSON.stringify(ranks));
}, 500));
</script>"""


def search_results(site: Path, queries: list[str]) -> dict[str, list[str]]:
    """For each query, the documents (docnames, duplicates kept as listed) that the site's search page
    lists, best first: Sphinx's own search code run in headless Chromium on the built index."""
    import html
    import json

    probe = site / f"_measure_search_{os.getpid()}.html"
    page = (site / "search.html").read_text(encoding="utf-8")
    page = page.replace("<body", f"<body data-queries=\"{html.escape(json.dumps(queries))}\"", 1)
    probe.write_text(page.replace("</body>", _SEARCH + "</body>"), encoding="utf-8")
    try:
        dom = _open(probe.as_uri())
    finally:
        probe.unlink()
    found = re.search(r'data-ranked="([^"]*)"', dom)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def search_rank(ranked: list[str], docname: str) -> int | None:
    """1 + the position of ``docname``'s first result in ``ranked`` (``search_results``), None if absent."""
    return next((i + 1 for i, d in enumerate(dict.fromkeys(ranked)) if d == docname), None)


_LETTER = r"[A-Za-zα-ωΑ-Ωϕϵ]"
_ACCENT = r"[\u0300-\u036f]?"
#: What a formula written as text looks like in prose (``unmarked_formulas``), one alternative each
FORMULA = re.compile("|".join([
    # a subscript written with "_": f_v, f̃_v, σ_v, x_{i}, Σ_v (a one-letter base and a short index, not a
    # snake_case name such as ci_low or as_row)
    rf"(?<![\w.\\]){_LETTER}{_ACCENT}_(?:\{{[^}}]*\}}|[A-Za-z0-9α-ω]{{1,3}}{_ACCENT})(?!\w)",
    # a power written with "^": e^ε, n^2, 10^{-6}
    r"[\w)]\^(?:[{(]|[-−]?\w)",
    # a letter raised by a Unicode superscript: σ², Φ⁻¹ (a number's power, 10⁶, is typography)
    rf"(?<!\w){_LETTER}{_ACCENT}[²³⁻¹⁴⁵⁶⁷⁸⁹⁰ⁿᵀ]+",
    # operators only formulas use
    r"[Σ∑∏√∫∂∇‖∞]",
    # a relation between two symbols: α ≤ d, k ∈ S
    rf"(?<!\w){_LETTER}{_ACCENT} ?[≤≥≠≈∈∉⊂⊆∝] ?{_LETTER}(?!\w)",
    r"\barg ?(?:min|max)\b",
    # a maths role that did not render (a docstring paragraph numpydoc read as something else)
    r":math:`",
]))
#: elements whose text is not prose: code, signatures, and maths (typeset by MathJax from these)
_NOT_PROSE_TAGS = {"code", "pre", "script", "style", "kbd", "samp", "tt", "svg", "math", "mjx-container"}
_NOT_PROSE_CLASSES = {"math", "sig", "headerlink", "highlight", "MathJax"}
_VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "col", "source", "area", "base"}


class _Prose(HTMLParser):
    """The text of a page's article (``bd-article``) outside code, signatures and maths."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.article, self.skip = 0, None, None
        self.parts: list[str] = []
        self.summary = None  # the depth of an autosummary table: its first column is a name and signature
        self.first_cell = False  # the next <td> opens a row of that table

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            return
        self.depth += 1
        cls = set((dict(attrs).get("class") or "").split())
        if tag == "table" and "autosummary" in cls:
            self.summary = self.depth
        elif tag == "tr" and self.summary is not None:
            self.first_cell = True
        if self.article is None and tag == "article" and "bd-article" in cls:
            self.article = self.depth
        elif self.skip is None and (tag in _NOT_PROSE_TAGS or cls & _NOT_PROSE_CLASSES
                                    or any(c.startswith("highlight-") for c in cls)
                                    or (tag == "td" and self.first_cell)):
            self.skip = self.depth
        if tag == "td":
            self.first_cell = False

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        if self.skip == self.depth:
            self.skip = None
        if self.summary == self.depth:
            self.summary = None
        if self.article == self.depth:
            self.article = -1   # the article is over
        self.depth -= 1

    def handle_data(self, data):
        if self.article is not None and self.article > 0 and self.skip is None:
            self.parts.append(data)


def prose_of(html_text: str) -> str:
    """The text of a page's article outside code, signatures and maths (``_Prose``)."""
    prose = _Prose()
    prose.feed(html_text)
    return "".join(prose.parts)


def unmarked_formulas(html_text: str) -> list[str]:
    """The formulas a page writes as text: each match of ``FORMULA`` in the prose of its article (not
    in code, signatures or maths), with a few characters around it."""
    text = prose_of(html_text)
    return [text[max(m.start() - 12, 0):m.end() + 12].replace("\n", " ") for m in FORMULA.finditer(text)]


def test_formula_detector_finds_formulas_in_prose_only():
    page = '<article class="bd-article"><p>{}</p></article>'
    for formula in ("f_v = max(f̃_v + δ, 0)", "with e^ε + 1", "σ² of Eq. 7", "Σ max(f, 0)", "‖f − p‖",
                    "0 < α ≤ d", "argmin over f", "x_{i} and n^2", "Φ⁻¹(1 − α/d)", "sum √n", ":math:`x`"):
        assert unmarked_formulas(page.format(formula)), formula
    for text in ("n_repeats and f_tilde are names", "ci_low, ci_high and as_row()", "n = 10⁶ users at ε = 1", "Base-Pos ≈ 0.5 of Base",
                 '<code>f_v</code> <span class="math">\\(f_v\\)</span>', "a_b_c_d", "results_2024"):
        assert unmarked_formulas(page.format(text)) == [], text
    assert unmarked_formulas("<p>f_v outside the article</p>") == []
    # an autosummary row: its first cell is a name and signature (not prose), its second the summary
    row = ('<table class="autosummary longtable table"><tr><td><p><a><code>F</code></a>(f_raw, x)</p></td>'
           '<td><p>{}</p></td></tr></table>')
    assert unmarked_formulas(page.format(row.format("plain words"))) == []
    assert unmarked_formulas(page.format(row.format("with f_v"))) != []


def test_formulas_are_marked_as_maths(site):
    """No page writes a formula as text outside code and maths (``FORMULA``; the site had 271 such
    pages of 589 before formulas were first marked), and no page shows maths as its source: a "$" in
    the prose is a ``$...$`` that MyST did not read as maths (a notebook's printed Markdown, say)."""
    pages = _pages(site)
    assert len(pages) > 400, len(pages)
    found, raw = {}, []
    for path in pages:
        text = prose_of(path.read_text(encoding="utf-8"))
        page = str(path.relative_to(site))
        if hits := [m.group() for m in FORMULA.finditer(text)]:
            found[page] = hits[:3]
        raw += [page] if "$" in text else []
    assert found == {}, (len(found), dict(list(found.items())[:20]))
    assert raw == [], raw


@needs_browser
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("page", ["methods/norm-hyb.html", "api/ldpopt.estimate.Estimate.html",
                                  "results/many-attributes.html"])
def test_marked_maths_renders(site, page, width):
    """Formulas marked as maths (a method's docstring on its page, an API page's ``:math:`` and
    ``.. math::``, a results page's ``$...$``) are typeset by MathJax at a desktop's and a phone's
    width: no maths left as source, no raw ``$`` or ``:math:`` in the prose, nothing wider than the
    window."""
    got = _measure(site, page, width, f"maths_{page.replace('/', '_').removesuffix('.html')}_{width}.png")
    assert got["maths"] >= 2 and got["maths_left"] == 0 and got["raw_maths"] == 0, got
    assert got["page_overflow"] <= 0 and got["code_scroll"] == 0, got


def test_numpydoc_reads_every_public_docstring_without_a_warning():
    """numpydoc drops a section it does not know (``Reports``) with a Python warning: every public
    class and function's docstring (methods and properties included) parses with warnings as errors,
    as the site's build runs it (docs/conf.py)."""
    import inspect
    import warnings

    pytest.importorskip("numpydoc")
    from numpydoc.docscrape import NumpyDocString

    from ldpopt._public import walk

    seen, failed = set(), []
    for full, obj in walk():
        targets = [(full, obj)]
        if inspect.isclass(obj):
            targets += [(f"{full}.{k}", v) for k, v in vars(obj).items() if not k.startswith("_")]
        for name, target in targets:
            doc = inspect.getdoc(target.fget if isinstance(target, property) else target)
            if not doc or id(target) in seen:
                continue
            seen.add(id(target))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    NumpyDocString(doc)
                except Exception as exc:  # noqa: BLE001 (the test reports which and why)
                    failed.append(f"{name}: {exc}")
    assert len(seen) > 300 and failed == [], failed[:20]
    with warnings.catch_warnings(), pytest.raises(UserWarning, match="Unknown section Reports"):
        warnings.simplefilter("error")
        NumpyDocString("Summary.\n\nReports\n-------\nx\n")
