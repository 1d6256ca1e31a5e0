"""The picture of a recollection in a real browser: headless Chromium (Debian's ``chromium``).

The page is opened from disk, scripts run, and Chromium's ``--dump-dom`` hands back
the DOM: it must hold a node per memory and an edge per expansion step, the page's
own layout check (no overlapping labels or nodes) must have found nothing, and the
memory named in the URL (``#e1``) must be open in the details panel. A screenshot
is saved. ``.ci/run`` installs chromium when it is missing; the tests skip, with
the reason, only when no Chromium can run.
"""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from langchain_ripplemem.cli.demo import NAMESPACE
from langchain_ripplemem.render.html_page import write_recall_html
from langchain_ripplemem.render.layout import layout_recall

from ..unit_tests.test_recall_html import rich_recall

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("recall_picture", ROOT / "scripts" / "recall_picture.py")
assert _spec is not None and _spec.loader is not None
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = browser.find_chromium()
    if exe is None:
        pytest.skip("no Chromium on PATH (.ci/run installs Debian's chromium; apt-get install chromium)")
    try:
        browser.run_chromium("about:blank", "--dump-dom", executable=exe)
    except (RuntimeError, OSError) as err:
        pytest.skip(f"Chromium cannot run here: {err}")
    return exe


class Dom(HTMLParser):
    """Elements as (tag, attributes) and the text inside ``#details``."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.details: list[str] = []
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.elements.append((tag, attributes))
        if self._depth or attributes.get("id") == "details":
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.details.append(data)

    def having(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and cls in a.get("class", "").split()]

    def one(self, tag: str, **attrs: str) -> dict[str, str]:
        found = [a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items())]
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


def test_recall_page_in_chromium(chromium, tmp_path):
    memory, result = rich_recall()
    page = write_recall_html(result, tmp_path / "recall.html", memory)
    layout = layout_recall(result, {u.id: u for u in memory.list_units(NAMESPACE)})
    dropped = next(n for n in layout.nodes.values() if n.label == "e1")

    dom = Dom(browser.run_chromium(page.as_uri() + "#e1", "--dump-dom", executable=chromium))
    body = dom.one("body")
    assert body.get("data-ready") == "1", "the page's script did not run to its end"
    assert body["data-label-overlaps"] == "0" and body["data-node-overlaps"] == "0"

    memories = dom.having("g", "memory")
    assert sorted(int(a["data-label"]) for a in memories) == list(range(1, 31))
    assert {a["data-id"] for a in dom.having("g", "node")} == set(layout.nodes)
    assert {a["data-id"] for a in dom.having("g", "anchor")} == {uid for t in result.rounds for uid in t.anchors}
    edges = {(a["data-src"], a["data-dst"], a["data-channel"]) for a in dom.having("path", "edge")}
    assert edges == {(link.src, link.dst, link.channel) for link in layout.links}
    assert {channel for _, _, channel in edges} == {"semantic", "structural"}

    details = dom.one("section", id="details")
    assert details["data-id"] == dropped.id
    text = re.sub(r"\s+", " ", " ".join(dom.details))
    assert dropped.unit is not None and dropped.unit.restatement in text
    assert "Found by expansion, but assembly did not keep it" in text
    assert {a["data-id"] for a in dom.having("g", "selected")} == {dropped.id}
    lit = {(a["data-src"], a["data-dst"]) for a in dom.having("path", "lit")}
    path = next(t.paths[dropped.id] for t in result.rounds if dropped.id in t.paths)
    assert lit >= set(zip(path, path[1:], strict=False))  # the whole path that found it is highlighted

    shot = browser.screenshot(page.as_uri() + "#m1", tmp_path / "recall.png")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000
    print(f"screenshot: {shot}; page script finished {body['data-render-ms']} ms after navigation start")
