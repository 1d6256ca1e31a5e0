"""The picture of a recollection: its layout, its self-contained page, the CLI and demo options.

The page in a real browser (Chromium) is in ``tests/integration_tests/test_recall_html_browser.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache

import pytest

from langchain_ripplemem.cli import main
from langchain_ripplemem.cli.demo import NAMESPACE, load_sample, run_demo
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.render.html_page import CHARS_PER_COLUMN, render_recall_html, write_recall_html
from langchain_ripplemem.render.layout import NODE_RADIUS, layout_recall
from langchain_ripplemem.schemas import (
    Hit,
    MemoryUnit,
    Provenance,
    RecalledMemory,
    RecallResult,
    TimeInterval,
)

from .conftest import BagOfWordsEmbeddings, make_unit

# Three expansion rounds that never stop early, and enough semantic edges (bag-of-words vectors
# are less alike than MiniLM's) for both edge types to carry paths.
THREE_ROUNDS = RecallConfig(controller={"max_rounds": 3, "sufficiency_similarity": 2.0})


@cache
def sample_memory() -> RippleMem:
    memory = RippleMem(BagOfWordsEmbeddings(), write_config=WriteConfig(linking={"semantic_threshold": 0.3}),
                       recall_config=THREE_ROUNDS)
    memory.add_conversation(load_sample()[0], namespace=NAMESPACE)
    return memory


def rich_recall() -> tuple[RippleMem, RecallResult]:
    """A recollection of 30 memories over three expansion rounds along both edge types."""
    memory = sample_memory()
    return memory, memory.recall(load_sample()[1][0]["question"], namespace=NAMESPACE, k=30)


def test_the_sample_recall_is_as_large_as_the_picture_must_handle():
    _, result = rich_recall()
    assert len(result.memories) == 30 and [t.round for t in result.rounds] == [0, 1, 2, 3]
    assert {c for t in result.rounds for c in t.channels.values()} == {"semantic", "structural"}


def test_each_round_records_the_edge_type_of_every_expanded_memory():
    _, result = rich_recall()
    hits: dict[tuple[int, str], set[str]] = {}
    for m in result.memories:
        for h in m.provenance:
            if h.source == "expansion":
                hits.setdefault((h.round, m.unit.id), set()).add(h.channel)
    for trace in result.rounds[1:]:
        assert set(trace.channels) == set(trace.expanded) == set(trace.paths)
        for uid, channel in trace.channels.items():
            assert channel in hits.get((trace.round, uid), {channel})
            assert trace.paths[uid][0] in trace.anchors


def test_layout_puts_every_memory_on_its_own_cell_sessions_in_time_order():
    memory, result = rich_recall()
    layout = layout_recall(result, {u.id: u for u in memory.list_units(NAMESPACE)})
    kept = [n for n in layout.nodes.values() if n.kept]
    assert sorted(n.rank for n in kept) == list(range(1, 31))
    cells = {(round(n.x), round(n.y)) for n in layout.nodes.values()}
    assert len(cells) == len(layout.nodes)
    points = [(n.x, n.y) for n in layout.nodes.values()]
    assert min(abs(a[0] - b[0]) + abs(a[1] - b[1]) for i, a in enumerate(points) for b in points[i + 1:]) \
        >= 2 * NODE_RADIUS + 8
    times = [c.time for c in layout.columns]
    assert None not in times and times == sorted(times)  # type: ignore[type-var]
    for column in layout.columns:
        members = sorted((n for n in layout.nodes.values() if n.column == column.index), key=lambda n: n.y)
        assert {(n.unit.source.conversation_id, n.unit.source.session_id) for n in members} == {column.key}
        order = [n.unit.metadata["turn_index"] for n in members]
        assert order == sorted(order)
    expanded = {uid for t in result.rounds for uid in t.expanded}
    assert {n.id for n in layout.nodes.values() if n.label.startswith("e")} == expanded - {m.unit.id for m in
                                                                                            result.memories}
    steps = {(a, b) for t in result.rounds for p in t.paths.values() for a, b in zip(p, p[1:], strict=False)}
    steps |= {(a, b) for m in result.memories for h in m.provenance for a, b in zip(h.path, h.path[1:], strict=False)}
    assert {(link.src, link.dst) for link in layout.links} == steps
    assert {link.channel for link in layout.links} == {"semantic", "structural"}


def test_page_is_self_contained_and_draws_every_node_and_edge():
    memory, result = rich_recall()
    page = render_recall_html(result, {u.id: u for u in memory.list_units(NAMESPACE)})
    layout = layout_recall(result)
    assert "http:" not in page and "https:" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"\ssrc\s*=", page)
    assert set(re.findall(r"url\(([^)]*)\)", page)) <= {"#arrow-semantic", "#arrow-structural", "#arrow-untyped"}
    assert page.count('class="node memory') == 30
    assert page.count('class="node ') == len(layout.nodes)
    for channel in ("semantic", "structural"):
        assert page.count(f'class="edge {channel}"') == sum(1 for link in layout.links if link.channel == channel)
    assert page.count("<template data-for=") == len(layout.nodes)
    assert page.count('<div class="round"') == 4
    for label in re.findall(r'<text class="session"[^>]*>([^<]*)<', page):
        assert len(label) <= CHARS_PER_COLUMN


def _unit(text: str, session: str = "S1", turn: str = "t1") -> MemoryUnit:
    return make_unit(text, conversation="a-very-long-conversation-name", session=session, turns=[turn],
                     time=TimeInterval.point(__import__("datetime").datetime(2026, 3, 2)))


def test_text_is_escaped_and_long_session_names_are_cut():
    bad = _unit('<script>alert("x")</script> & "quotes"', session="a-session-with-a-long-name")
    other = _unit("plain", session="S2", turn="t2").model_copy(update={"source": Provenance(
        conversation_id="second", session_id="S2", turn_ids=["t2"])})
    result = RecallResult(query="<b>q</b>", namespace=("n",), memories=[
        RecalledMemory(unit=bad, score=1.0, provenance=[Hit(source="semantic", rank=0, score=0.9)]),
        RecalledMemory(unit=other, score=0.5, provenance=[Hit(source="lexical", rank=0, score=2.0)])])
    page = render_recall_html(result)
    assert "<script>alert" not in page and "&lt;script&gt;alert(&quot;x&quot;)" in page
    assert "<b>q</b>" not in page and "&lt;b&gt;q&lt;/b&gt;" in page
    sessions = re.findall(r'<text class="session"[^>]*>([^<]*)<', page)
    assert sessions[0].endswith("\u2026") and len(sessions[0]) == CHARS_PER_COLUMN
    assert 'a-very-long-conversation-name/a-session-with-a-long-name' in page  # the full name in its tooltip


def test_an_empty_recollection_still_renders():
    page = render_recall_html(RecallResult(query="Where is Bob moving?", namespace=("users", "bob")))
    assert "No memories were recalled." in page and 'id="recall-graph"' not in page


def test_the_data_model_does_not_import_the_renderer():
    code = ("import sys, langchain_ripplemem.schemas as s; assert 'langchain_ripplemem.render.html_page' not in "
            "sys.modules; assert not hasattr(s.RecallResult, 'to_html')")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_write_recall_html_loads_the_text_of_memories_that_were_not_kept(tmp_path):
    memory, result = rich_recall()
    path = write_recall_html(result, tmp_path / "deep" / "page.html", memory)
    page = path.read_text(encoding="utf-8")
    assert "text not loaded" not in page
    assert "text not loaded" in render_recall_html(result)  # without the memory, those stay unnamed


@pytest.fixture
def store(tmp_path):
    conversation, _ = load_sample()
    path = tmp_path / "conv.json"
    path.write_text(conversation.model_dump_json(), encoding="utf-8")
    assert main(["ingest", str(path), "--persist", str(tmp_path / "store"), "--namespace", "demo/maya",
                 "--quiet"]) == 0
    return tmp_path / "store"


def test_cli_recall_html_writes_the_page(store, tmp_path, capsys):
    question = load_sample()[1][0]["question"]
    out = tmp_path / "pages" / "recall.html"
    assert main(["recall", question, "--persist", str(store), "--namespace", "demo/maya", "--k", "12",
                 "--html", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"wrote {out}" in captured.err and f"Q: {question}" in captured.out
    page = out.read_text(encoding="utf-8")
    assert page.count('class="node memory') == 12 and question.replace("'", "&#x27;") in page


def test_demo_html_writes_one_page_per_question(tmp_path):
    lines: list[str] = []
    run_demo(k=4, out=lines.append, html_dir=tmp_path)
    questions = load_sample()[1]
    pages = sorted(tmp_path.glob("q*.html"))
    assert [p.name for p in pages] == [f"q{i}.html" for i in range(1, len(questions) + 1)]
    for page, item in zip(pages, questions, strict=True):
        assert item["question"].replace("'", "&#x27;") in page.read_text(encoding="utf-8")
        assert f"   picture: {page}" in lines
