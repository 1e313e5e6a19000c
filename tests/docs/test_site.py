"""The users' guide as a site (make docs, mkdocs.yml), looked at in a real browser: Debian's
Chromium, headless, on the site served from localhost. The front page and a reference page must
render with the theme (its header colour, the navigation, the search box) and show their text;
a page that fails to render, or renders unstyled, fails here.

scripts/test.sh builds the site first (scripts/build_docs.sh), in strict mode: a broken link or a
page left out of the navigation has failed that build already.
"""

import functools
import http.server
import json
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The flags a closed network needs: no background fetches, no first-run work.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--window-size=1280,900"]
# The Material theme's default primary colour (indigo), the header's background.
HEADER_RGB = (0x40, 0x51, 0xB5)


@pytest.fixture(scope="module")
def site_url():
    assert (SITE / "index.html").exists(), "build the site first: scripts/build_docs.sh (make docs)"
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def chromium(tmp_path, *args):
    profile = tmp_path / "profile"
    result = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def look_at(tmp_path, url, name):
    """The page's DOM after its scripts ran, and a screenshot of it."""
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", url)
    png = tmp_path / f"{name}.png"
    chromium(tmp_path, "--virtual-time-budget=3000", f"--screenshot={png}", url)
    return dom, Image.open(png).convert("RGB")


def near(pixel, colour, tolerance=12):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


def assert_rendered_with_the_theme(image):
    assert image.size == (1280, 900)
    # The header band: the theme's colour across the top of the page.
    header = [image.getpixel((x, 20)) for x in range(0, 1280, 40)]
    assert sum(near(p, HEADER_RGB) for p in header) >= len(header) * 0.5, header[:5]
    # Text below it: many shades, not a blank or single-colour page.
    body = image.crop((0, 100, 1280, 900)).getcolors(maxcolors=1 << 16)
    assert body is not None and len(body) > 30, f"{len(body or [])} colours below the header"


def test_the_front_page_renders(site_url, tmp_path):
    dom, image = look_at(tmp_path, f"{site_url}/index.html", "front")
    assert_rendered_with_the_theme(image)
    assert "exactly once, for one table or a thousand" in dom
    assert 'data-md-component="search"' in dom
    # The navigation, in the order a user reads.
    order = [dom.index(f'href="{page}"') for page in ("install.html", "pipelines.html", "spark.html",
                                                        "monitoring.html", "reference/options.html")]
    assert order == sorted(order)


def test_a_reference_page_renders_its_table(site_url, tmp_path):
    dom, image = look_at(tmp_path, f"{site_url}/reference/tables.html", "tables")
    assert_rendered_with_the_theme(image)
    assert "<table" in dom and "finalized_until" in dom and "retention_headroom_hours" in dom


def test_the_search_index_holds_every_page():
    index = json.loads((SITE / "search" / "search_index.json").read_text())
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    pages = {str(p.relative_to(ROOT / "docs").with_suffix(".html")) for p in (ROOT / "docs").rglob("*.md")}
    assert pages <= locations, sorted(pages - locations)
