"""The page of ``ripplemem ui`` in a real browser: headless Chromium driven over its DevTools protocol.

The page is served by uvicorn in this process (over a memory with fast embeddings) and
opened in Debian's ``chromium`` (:mod:`benchmarks.browser`). It must load with nothing
fetched but from the server (no CDN: the machine may be offline), list a planted memory
on the timeline, show a memory and follow one of its links with a click, run a recall
with its rounds and picture, and forget a memory after its confirmation, which removes
it from the page and from recall. The tests skip, with the reason, only when no
Chromium can run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the [ui] extra")
pytest.importorskip("websockets", reason="the DevTools client (the test extra)")

from benchmarks.browser import BrowserError, Chromium, Tab, find_chromium, serving  # noqa: E402
from langchain_ripplemem.memory import RippleMem  # noqa: E402
from langchain_ripplemem.server.ui_access import MemoryAccess  # noqa: E402
from langchain_ripplemem.server.ui_page import create_app  # noqa: E402

from ..unit_tests.conftest import BagOfWordsEmbeddings, make_conversation  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MAYA = "users/maya"
ALLERGY = "Maya: I found out I am allergic to shellfish, no shrimp for me."


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    if find_chromium() is None:
        pytest.skip("no Chromium on PATH (.ci/run installs Debian's chromium; apt-get install chromium)")
    try:
        chromium = Chromium()
    except (BrowserError, OSError) as err:
        pytest.skip(f"Chromium cannot run here: {err}")
    with chromium:
        yield chromium


@pytest.fixture
def store(tmp_path: Path) -> Path:
    directory = tmp_path / "store"
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=directory) as memory:
        memory.add_conversation(make_conversation("c1"), namespace=MAYA)
    return directory


def texts(tab: Tab, selector: str) -> list[str]:
    return tab.evaluate(f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)")  # type: ignore[no-any-return]


def detail_text(tab: Tab) -> str:
    return tab.evaluate("(document.getElementById('detail-text') || {}).textContent || ''")  # type: ignore[no-any-return]


def test_the_page_lists_follows_recalls_and_forgets(browser, store, tmp_path):
    access = MemoryAccess(lambda: RippleMem(BagOfWordsEmbeddings(), persist_directory=store), per_use=True,
                          idle=0.2)
    with serving(create_app(access, store=str(store))) as url:
        tab = browser.tab(url)
        tab.wait_for("document.body.dataset.ready === '1'")
        # Offline: every request of the page went to this server, none elsewhere.
        assert tab.requests and all(request.startswith(url) for request in tab.requests), tab.requests
        assert texts(tab, "#namespaces li")[0].startswith(MAYA)
        timeline = texts(tab, "#timeline li.item .text")
        assert ALLERGY in timeline and len(timeline) == 7

        # One memory, then a link of it followed with a click.
        tab.click("#timeline li.item")
        tab.wait_for(f"(document.getElementById('detail-text') || {{}}).textContent === {json.dumps(ALLERGY)}")
        link = tab.evaluate("(() => { const b = document.querySelector('#detail .links button.link');"
                            " return b && [b.dataset.id, b.textContent]; })()")
        assert link, "the memory shows no link"
        tab.click("#detail .links button.link")
        tab.wait_for(f"location.hash.includes('m={link[0]}')")
        tab.wait_for(f"(document.getElementById('detail-text') || {{}}).textContent === {json.dumps(link[1])}")
        tab.evaluate("history.back()")  # Back returns to the memory before
        tab.wait_for(f"(document.getElementById('detail-text') || {{}}).textContent === {json.dumps(ALLERGY)}")

        # A recall: its memories, rounds and picture.
        tab.type("#query", "What is Maya allergic to?")
        tab.press_enter()
        tab.wait_for("document.body.dataset.recalled === '1'")
        assert ALLERGY in texts(tab, "#recall-memories li.item .text")
        assert texts(tab, "#rounds .round")
        assert "What is Maya allergic to?" in tab.evaluate("document.getElementById('picture').srcdoc")
        tab.screenshot(tmp_path / "recall.png")

        # Forget the memory shown, with the confirmation: gone from the timeline and from recall.
        tab.click("#forget-memory")
        tab.wait_for("document.getElementById('confirm').open")
        tab.click("#confirm-ok")
        tab.wait_for("document.body.dataset.recalled === '2'")  # the recall ran again after the forget
        assert "forgot 1 unit" in tab.evaluate("document.getElementById('notice').textContent")
        assert ALLERGY not in texts(tab, "#recall-memories li.item .text")
        assert detail_text(tab) != ALLERGY
        tab.click("#tab-timeline")
        tab.wait_for("document.querySelectorAll('#timeline li.item').length === 6")
        assert ALLERGY not in texts(tab, "#timeline li.item .text")
        tab.screenshot(tmp_path / "timeline.png")
    access.close()
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=store) as memory:
        assert ALLERGY not in [m.unit.restatement for m in memory.recall("shellfish allergy", namespace=MAYA).memories]
        assert len(memory.list_units(MAYA, include_suppressed=True)) == 6


def test_a_read_only_page_offers_no_forget(browser, store):
    access = MemoryAccess(lambda: RippleMem(BagOfWordsEmbeddings(), persist_directory=store), per_use=True, idle=0)
    with serving(create_app(access, read_only=True)) as url:
        tab = browser.tab(url)
        tab.wait_for("document.body.dataset.ready === '1'")
        assert not tab.evaluate("document.getElementById('read-only').hidden")
        tab.click("#timeline li.item")
        tab.wait_for("!!document.getElementById('detail-text')")
        assert tab.evaluate("document.getElementById('forget-memory')") is None
        # Asked anyway (a hand-made request), the server refuses and says why.
        answer = tab.evaluate("fetch('/api/forget', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                              " body: JSON.stringify({namespace: 'users/maya', what: 'person', target: 'Sam',"
                              " confirm: 'Sam'})}).then(async r => [r.status, (await r.json()).error])")
        assert answer[0] == 403 and "read-only" in answer[1]
    access.close()
