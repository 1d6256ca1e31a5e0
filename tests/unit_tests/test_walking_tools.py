"""Walking a memory: ``explore`` (one memory, its source turns, its links) and ``timeline`` (a window, paged).

On every surface: the Python API (``RippleMem.explore``/``timeline``), the LangChain tools, the MCP
server and the served agent graph. The expected links are read from ``memory.edges()``, the
expected windows from the units' own times, so nothing here is typed from a run.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime, timezone

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langchain_ripplemem.index import unit_list
from langchain_ripplemem.index.marks import is_suppressed, stated_at
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER_WRITE
from langchain_ripplemem.recall.browsing import MemoryNeighbourhood, TimelinePage
from langchain_ripplemem.recall.filters import outside, recall_filter
from langchain_ripplemem.schemas import MemoryUnit
from langchain_ripplemem.text.names import refers_to
from langchain_ripplemem.tools import create_explore_memory_tool, create_memory_timeline_tool

from .conftest import BagOfWordsEmbeddings, filled_memory, make_conversation
from .fakes import ScriptedChatModel

NS = ("users", "maya")
# A low semantic threshold gives the bag-of-words memory edges of both types (PAPER_WRITE's structural ones too).
BOTH_TYPES = PAPER_WRITE.replace(linking={"semantic_threshold": 0.15})


@pytest.fixture(scope="module")
def memory():
    with filled_memory(NS, write_config=BOTH_TYPES) as mem:
        yield mem


def unit_of(memory: RippleMem, turn: str):
    (unit,) = [u for u in memory.list_units(NS) if u.source.turn_ids == [turn]]
    return unit


def expected_links(memory: RippleMem, uid: str) -> dict[str, list[tuple[str, float]]]:
    """Each edge type's ``(neighbour, weight)`` of ``uid``, strongest first (ties by id), from the stored edges."""
    links: dict[str, list[tuple[str, float]]] = {}
    for edge in memory.edges(NS):
        if uid in (edge.src, edge.dst):
            links.setdefault(edge.type, []).append((edge.dst if edge.src == uid else edge.src, edge.weight))
    return {t: sorted(found, key=lambda link: (-link[1], link[0])) for t, found in links.items()}


# -- the window ---------------------------------------------------------------------------------


MONDAY = datetime(2026, 3, 23, 10, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("since", "until", "start", "end"), [
    ("2026-03-01", "2026-03-07", "2026-03-01T00:00:00+00:00", "2026-03-07T23:59:59.999999+00:00"),
    ("2026-03-01T12:30:00Z", None, "2026-03-01T12:30:00+00:00", None),
    (date(2026, 3, 1), date(2026, 3, 1), "2026-03-01T00:00:00+00:00", "2026-03-01T23:59:59.999999+00:00"),
    (datetime(2026, 3, 1, 9), None, "2026-03-01T09:00:00+00:00", None),  # naive: UTC
    ("last week", "last week", "2026-03-16T00:00:00+00:00", "2026-03-22T23:59:59.999999+00:00"),
    ("3 days ago", "yesterday", "2026-03-20T00:00:00+00:00", "2026-03-22T23:59:59.999999+00:00"),
    ("March 2026", None, "2026-03-01T00:00:00+00:00", None),
    (None, None, None, None),
])
def test_a_window_reads_dates_datetimes_and_time_phrases(memory, since, until, start, end):
    """As recall's since/until filter reads them (recall/filters.py): a day or a phrase covers all of it."""
    page = memory.timeline(since, until, namespace=NS, now=MONDAY)
    assert (page.since.isoformat() if page.since else None, page.until.isoformat() if page.until else None) \
        == (start, end)


@pytest.mark.parametrize(("since", "until", "named"), [
    ("someday", None, "since must be"), (None, "2026-02-30", "until must be"), ("", None, "since must be"),
    (1714000000, None, "since must be"), ("2026-03-09", "2026-03-01", "since (2026-03-09T00:00:00+00:00) must not be"),
])
def test_a_bad_window_is_a_value_error_naming_the_argument(memory, since, until, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        memory.timeline(since, until, namespace=NS, now=MONDAY)


# -- explore --------------------------------------------------------------------------------------


def test_explore_groups_the_links_by_edge_type_strongest_first_and_bounded(memory):
    dinner = unit_of(memory, "S3:2")
    expected = expected_links(memory, dinner.id)
    assert set(expected) == {"semantic", "structural"} and all(len(links) > 2 for links in expected.values())

    found = memory.explore(dinner.id, namespace=NS, limit=2)
    assert found.memory == dinner
    assert {t: [(link.memory.id, link.weight) for link in links] for t, links in found.links.items()} == \
        {t: links[:2] for t, links in expected.items()}
    assert found.link_counts == {t: len(links) for t, links in expected.items()}
    text = found.describe()
    for edge_type, links in expected.items():
        assert f"{edge_type} ({len(links)} links, the 2 strongest shown):" in text
    assert text.index(f"[{expected['semantic'][0][0]}]") < text.index(f"[{expected['semantic'][1][0]}]")


def test_explore_shows_the_source_turns_and_the_memories_around_it(memory):
    hiking, before = unit_of(memory, "S2:2"), unit_of(memory, "S2:1")
    found = memory.explore(hiking.id, namespace=NS)
    source = found.source
    assert (source.conversation_id, source.session_id, source.turn_ids, source.speaker) == \
        ("c1", "S2", ["S2:2"], "Maya")
    assert source.session_time == datetime(2026, 3, 20, 19, tzinfo=timezone.utc)
    assert source.before == before and source.after is None  # the last turn of its session
    assert "From conversation c1, session S2 (2026-03-20 19:00 UTC), turn S2:2, said by Maya." in found.describe()
    assert f"Said before it: [{before.id}] | 2026-03-20 | {before.restatement}" in found.describe()


def test_explore_an_unknown_or_suppressed_id_says_so(memory):
    missing = memory.explore("f" * 32, namespace=NS)
    assert missing.memory is None and missing.describe() == f"No memory with id {'f' * 32!r} in users/maya."
    other = RippleMem(memory.embeddings)
    other.add_conversation({"id": "x", "sessions": [{"id": "s", "time": "2026-03-02T00:00:00Z", "turns": [
        {"id": "t", "speaker": "Sam", "text": "Sam's own secret."}]}]}, namespace=("users", "sam"))
    (sams,) = other.list_units(("users", "sam"))
    assert memory.explore(sams.id, namespace=NS).memory is None  # another memory's id, not this namespace's


def test_a_suppressed_memory_is_neither_explored_nor_shown_as_a_link():
    with filled_memory(NS, write_config=BOTH_TYPES) as memory:
        dinner = unit_of(memory, "S3:2")
        strongest = expected_links(memory, dinner.id)["semantic"][0][0]
        memory.suppress([strongest], namespace=NS, reason="wrong")
        found = memory.explore(dinner.id, namespace=NS, limit=50)
        assert strongest not in {link.memory.id for links in found.links.values() for link in links}
        assert found.link_counts["semantic"] == len(expected_links(memory, dinner.id)["semantic"]) - 1
        assert memory.explore(strongest, namespace=NS).memory is None


@pytest.mark.parametrize(("kwargs", "named"), [({"memory_id": ""}, "memory_id"), ({"memory_id": None}, "memory_id"),
                                               ({"limit": 0}, "limit"), ({"limit": 51}, "limit")])
def test_explore_refuses_bad_arguments_naming_them(memory, kwargs, named):
    arguments = {"memory_id": "f" * 32, **kwargs}
    with pytest.raises(ValueError, match=f"^{named} must"):
        memory.explore(arguments.pop("memory_id"), namespace=NS, **arguments)


# -- timeline -------------------------------------------------------------------------------------


def test_the_timeline_is_the_window_oldest_first_in_pages(memory):
    units = memory.list_units(NS)
    in_march = sorted((u for u in units if u.time.start.month == 3 or u.time.end.month == 3),
                      key=lambda u: u.time.start)
    assert 3 < len(in_march) < len(units)

    first = memory.timeline("2026-03-01", "2026-03-31", namespace=NS, page_size=3)
    second = memory.timeline("2026-03-01", "2026-03-31", namespace=NS, page_size=3, page=2)
    assert first.total == second.total == len(in_march) and first.pages == 2
    assert first.memories + second.memories == in_march
    assert [u.time.start for u in in_march] == sorted(u.time.start for u in in_march)
    assert first.describe().startswith(f"memories 1-3 of {len(in_march)} from 2026-03-01 to 2026-03-31 in "
                                       "users/maya, oldest first (page 1 of 2; page=2 for more):")
    past = memory.timeline("2026-03-01", "2026-03-31", namespace=NS, page_size=3, page=3)
    assert past.memories == [] and past.describe().startswith("No memories on page 3:")


def test_a_memory_about_a_period_is_in_every_window_it_meets(memory):
    """The hike was said on March 20th about 'last week' (March 9th to 15th): a window of March 12th holds it."""
    hiking = unit_of(memory, "S2:2")
    assert hiking.time.start.day == 9 and hiking.time.end.day == 15
    assert memory.timeline("2026-03-12", "2026-03-12", namespace=NS).memories == [hiking]
    assert memory.timeline("2026-03-20", "2026-03-20", namespace=NS).memories == [unit_of(memory, "S2:1")]


def test_a_memory_without_a_time_is_placed_at_when_it_was_stored():
    with RippleMem(BagOfWordsEmbeddings()) as memory:
        memory.add_conversation({"id": "c", "sessions": [{"id": "s", "turns": [
            {"id": "t", "speaker": "Sam", "text": "No date was given for this."}]}]}, namespace=NS)
        (undated,) = memory.list_units(NS)
        assert undated.time is None
        assert memory.timeline(namespace=NS).memories == [undated]
        assert memory.timeline(since=undated.created_at, namespace=NS).memories == [undated]
        assert memory.timeline("2026-03-01", "2026-03-31", namespace=NS).total == 0


def test_the_timeline_of_a_person_keeps_what_they_said_or_took_part_in(memory):
    sam = memory.timeline(None, None, person="sam", namespace=NS, page_size=100)
    assert sam.person == "Sam"
    assert {u.id for u in sam.memories} == {u.id for u in memory.list_units(NS)
                                            if "Sam" in u.participants or u.metadata.get("speaker") == "Sam"}
    assert [u.source.turn_ids for u in memory.timeline(person="Priya", namespace=NS).memories] == [["S2:2"]]
    nobody = memory.timeline("2026-03-01", None, person="Zed", namespace=NS)
    assert nobody.total == 0 and nobody.describe() == "No memories from 2026-03-01 with Zed in users/maya."


def test_a_relative_window_is_relative_to_now(memory):
    now = datetime(2026, 4, 22, 8, 0, tzinfo=timezone.utc)  # a Wednesday: 'this week' holds April 20th
    assert [u.source.turn_ids[0] for u in memory.timeline("this week", None, namespace=NS, now=now).memories] == \
        ["S3:1", "S3:2"]


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"since": "someday"}, "since"), ({"until": "the 32nd"}, "until"), ({"person": "  "}, "person"),
    ({"page": 0}, "page"), ({"page_size": 101}, "page_size"), ({"page": True}, "page")])
def test_the_timeline_refuses_bad_arguments_naming_them(memory, kwargs, named):
    with pytest.raises(ValueError, match=f"^{named} must"):
        memory.timeline(namespace=NS, **kwargs)


async def test_the_async_twins_answer_as_the_sync_methods(memory):
    dinner = unit_of(memory, "S3:2")
    assert await memory.aexplore(dinner.id, namespace=NS) == memory.explore(dinner.id, namespace=NS)
    assert await memory.atimeline("2026-03-01", namespace=NS) == memory.timeline("2026-03-01", namespace=NS)


# -- the timeline reads the index ------------------------------------------------------------------


def mixed_memory() -> RippleMem:
    """Dated and undated sessions, a stated period, equal times, full and first names, suppressed memories."""
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(make_conversation(), namespace=NS)
    memory.add_conversation({"id": "c2", "sessions": [
        {"id": "U1", "turns": [  # no time: placed at when it was stored
            {"id": "U1:1", "speaker": "Sam McDonald", "text": "I fixed the bike with Lena yesterday."},
            {"id": "U1:2", "speaker": "Lena", "text": "Sam and I should ride to Portland soon."}]},
        {"id": "D1", "time": "2026-03-02T19:00:00+00:00", "turns": [  # the same time as S1
            {"id": "D1:1", "speaker": "lena", "text": "Maya told me about the shellfish allergy."},
            {"id": "D1:2", "speaker": "Sam McDonald", "text": "Priya went hiking two weeks ago."}]},
        {"id": "U2", "turns": [{"id": "U2:1", "speaker": "Priya", "text": "Nothing dated here at all."}]}]},
        namespace=NS)
    by_turn = {u.source.turn_ids[0]: u.id for u in memory.list_units(NS)}
    memory.suppress([by_turn["S1:3"], by_turn["U1:2"], by_turn["D1:1"]], namespace=NS, reason="wrong")
    memory.unsuppress([by_turn["D1:1"]], namespace=NS)
    return memory


def scanned_timeline(memory: RippleMem, since, until, person: str | None) -> list[MemoryUnit]:
    """The timeline as a pass over every unit gives it: the rule the index's arrays must give again."""
    window = recall_filter(since, until, reference=MONDAY)
    low = window.since or datetime.min.replace(tzinfo=timezone.utc)
    high = window.until or datetime.max.replace(tzinfo=timezone.utc)

    def when(unit: MemoryUnit) -> tuple[datetime, datetime]:
        return (unit.time.start, unit.time.end) if unit.time else (stated_at(unit), stated_at(unit))

    units = memory.reader.namespace_index(NS).units  # the stored order
    found = [u for u in units if not is_suppressed(u) and when(u)[1] >= low and when(u)[0] <= high
             and (person is None or any(refers_to(person, name)
                                        for name in [*u.participants, u.metadata.get("speaker") or ""]))]
    return sorted(found, key=when)


def same_as_the_pass_over_every_unit(memory: RippleMem, windows: list, people: tuple) -> None:
    for (since, until), person in itertools.product(windows, people):
        expected = scanned_timeline(memory, since, until, person)
        pages = [memory.timeline(since, until, person=person, namespace=NS, page=page, page_size=2, now=MONDAY)
                 for page in range(1, 12)]
        assert [u.id for p in pages for u in p.memories] == [u.id for u in expected], (since, until, person)
        assert pages[0].total == len(expected)
        if person is None:  # the window is recall's filter's
            index = memory.reader.namespace_index(NS)
            hidden = outside(index, recall_filter(since, until, reference=MONDAY)) | index.suppressed
            assert {u.id for p in pages for u in p.memories} == set(index.ids) - hidden


def test_the_timeline_from_the_index_is_the_pass_over_every_unit():
    with mixed_memory() as memory:
        units = memory.list_units(NS, include_suppressed=True)
        undated = [u for u in units if u.time is None]
        assert len(undated) == 3 and sum(is_suppressed(u) for u in units) == 2
        stored = min(u.created_at for u in undated)
        windows = [(None, None), ("2026-03-01", "2026-03-31"), ("2026-03-12", "2026-03-12"), (None, "2026-03-02"),
                   ("2026-04-01", None), (stored, None), (None, stored), ("last week", None)]
        same_as_the_pass_over_every_unit(memory, windows, (None, "sam", "Sam McDonald", "LENA", "priya", "Zed"))
        assert len(scanned_timeline(memory, None, None, None)) == len(units) - 2
        assert {u.source.turn_ids[0] for u in scanned_timeline(memory, None, None, "sam")} >= {"S1:2", "U1:1", "D1:2"}
        # what the index keeps per row grows with the next write: a new speaker, a new undated memory
        memory.add_conversation({"id": "c3", "sessions": [
            {"id": "N1", "time": "2026-03-12T08:00:00+00:00", "turns": [
                {"id": "N1:1", "speaker": "Zed Okafor", "text": "Sam lent me his tent for the hike."}]},
            {"id": "N2", "turns": [{"id": "N2:1", "speaker": "Maya", "text": "Zed still has the tent."}]}]},
            namespace=NS)
        same_as_the_pass_over_every_unit(memory, windows[:3] + windows[5:6], (None, "zed", "sam", "maya"))


def test_a_timeline_page_parses_only_its_own_memories_and_those_without_a_time(monkeypatch):
    monkeypatch.setattr(unit_list, "PARSED_KEPT", 0)  # no model kept: every read of a unit parses it
    with mixed_memory() as memory:
        memory.timeline(person="maya", namespace=NS)  # what the index keeps per row (times, speakers): built once
        units = list(memory.reader.namespace_index(NS).units)
        parse, parsed = MemoryUnit.model_validate_json, []
        monkeypatch.setattr(MemoryUnit, "model_validate_json", staticmethod(lambda data: parsed.append(data) or
                                                                            parse(data)))
        page = memory.timeline(person="maya", namespace=NS, page_size=2)
        undated = sum(u.time is None for u in units)  # read at each call, as recall's filter reads them
        assert page.total > len(page.memories) == 2 and undated
        assert len(parsed) == len(page.memories) + undated < len(units)


# -- the LangChain tools --------------------------------------------------------------------------


CONFIG = {"configurable": {"user_id": "maya"}}


@pytest.fixture(scope="module")
def tools(memory):
    template = ("users", "{user_id}")
    return (create_explore_memory_tool(memory, namespace=template, limit=2),
            create_memory_timeline_tool(memory, namespace=template, page_size=3))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_tools_answer_with_the_methods_text(memory, tools, mode):
    explore, timeline = tools
    dinner = unit_of(memory, "S3:2")
    calls = [(explore, {"memory_id": f"[{dinner.id}]"}),  # as recall shows it, brackets and all
             (timeline, {"since": "2026-03-01", "until": "2026-03-31", "page": 2})]
    answers = [tool.invoke(args, CONFIG) if mode == "sync" else await tool.ainvoke(args, CONFIG)
               for tool, args in calls]
    assert answers == [memory.explore(dinner.id, namespace=NS, limit=2).describe(),
                       memory.timeline("2026-03-01", "2026-03-31", namespace=NS, page=2, page_size=3).describe()]


@pytest.mark.parametrize(("tool", "args", "answer"), [
    (0, {"memory_id": "f" * 32}, f"No memory with id {'f' * 32!r} in users/maya."),
    (1, {"since": "2027-01-01"}, "No memories from 2027-01-01 in users/maya."),
    (1, {"since": "someday"}, "since must be an ISO date or datetime"),
    (1, {"until": "2026-02-30"}, "until must be"),
    (1, {"page": 0}, "page must be an integer of at least 1, got 0"),
    (0, {}, "explore_memory was called with bad arguments: memory_id: Field required"),
    (1, {"page": "two"}, "memory_timeline was called with bad arguments: page: Input should be a valid integer"),
])
def test_unknown_ids_empty_windows_and_bad_calls_are_answers(tools, tool, args, answer):
    reply = tools[tool].invoke({"type": "tool_call", "id": "c1", "name": tools[tool].name, "args": args}, CONFIG)
    assert isinstance(reply, ToolMessage) and reply.content.startswith(answer)
    assert reply.status == ("success" if answer.startswith("No ") else "error")


def test_blank_optional_arguments_are_not_given(memory, tools):
    """Models fill optional arguments with "": a blank since, until or person leaves that filter out."""
    everything = tools[1].invoke({"since": "", "until": " ", "person": ""}, CONFIG)
    assert everything == memory.timeline(namespace=NS, page_size=3).describe()


def test_the_namespace_comes_from_the_run(memory, tools):
    reply = tools[1].invoke({}, {"configurable": {"user_id": "sam"}})
    assert reply == "No memories at any time in users/sam."
    with pytest.raises(ValueError, match="needs 'user_id'"):  # a setup error, not the model's
        tools[1].invoke({})


def test_tool_factories_refuse_bad_settings(memory):
    with pytest.raises(ValueError, match="limit must"):
        create_explore_memory_tool(memory, limit=0)
    with pytest.raises(ValueError, match="page_size must"):
        create_memory_timeline_tool(memory, page_size=500)


# -- MCP ------------------------------------------------------------------------------------------


async def test_the_mcp_tools_walk_within_the_servers_namespace(memory):
    pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")
    from mcp.shared.memory import create_connected_server_and_client_session

    from langchain_ripplemem.server.mcp import create_mcp_server

    dinner = unit_of(memory, "S3:2")
    server = create_mcp_server(memory, namespace="users/maya")
    async with create_connected_server_and_client_session(server._mcp_server) as session:
        explored = await session.call_tool("explore_memory", {"memory_id": dinner.id, "limit": 2})
        unknown = await session.call_tool("explore_memory", {"memory_id": "f" * 32})
        page = await session.call_tool("memory_timeline", {"since": "2026-03-01", "until": "2026-03-31",
                                                           "page_size": 3, "page": 2})
        empty = await session.call_tool("memory_timeline", {"since": "2027-01-01"})
        bad = await session.call_tool("memory_timeline", {"since": "someday"})
        outside = await session.call_tool("explore_memory", {"memory_id": dinner.id, "namespace": "users/sam"})
    expected = memory.explore(dinner.id, namespace=NS, limit=2)
    assert not explored.isError and explored.content[0].text == expected.describe()
    assert MemoryNeighbourhood.model_validate(explored.structuredContent) == expected
    assert not unknown.isError and unknown.content[0].text == f"No memory with id {'f' * 32!r} in users/maya."
    assert TimelinePage.model_validate(page.structuredContent) == \
        memory.timeline("2026-03-01", "2026-03-31", namespace=NS, page=2, page_size=3)
    assert not empty.isError and empty.content[0].text == "No memories from 2027-01-01 in users/maya."
    assert bad.isError and "since must be" in bad.content[0].text
    assert outside.isError and "outside this server's namespace" in outside.content[0].text


# -- the served agent graph -----------------------------------------------------------------------


def test_the_agent_graph_recalls_then_explores_a_memorys_links(tmp_path, monkeypatch):
    import importlib

    from .conftest import ROOT, make_conversation

    monkeypatch.setenv("RIPPLEMEM_PERSIST", str(tmp_path / "store"))
    monkeypatch.syspath_prepend(str(ROOT))
    recall_graph, agent = importlib.import_module("graphs.recall"), importlib.import_module("graphs.agent")
    shared = RippleMem(BagOfWordsEmbeddings(), write_config=BOTH_TYPES, persist_directory=tmp_path / "store")
    shared.add_conversation(make_conversation(), namespace=("memories", "maya"))
    recall_graph.set_memory(shared)
    try:
        def explore_first_recalled(messages):  # the id the recall tool showed first
            first = messages[-1].content.splitlines()[1]
            return AIMessage("", tool_calls=[{"name": "explore_memory", "id": "t2",
                                              "args": {"memory_id": first[first.index("[") + 1:first.index("]")]}}])
        llm = ScriptedChatModel(responses=[
            AIMessage("", tool_calls=[{"name": "recall_memory", "id": "t1", "args": {"query": "birthday dinner"}}]),
            explore_first_recalled,
            AIMessage("", tool_calls=[{"name": "memory_timeline", "id": "t3", "args": {"since": "2026-04-01"}}]),
            AIMessage("done"),
        ])
        out = agent.graph.invoke({"messages": [("user", "Where is my birthday dinner?")]},
                                 context=agent.AgentContext(user_id="maya", model=llm))
    finally:
        recall_graph.set_memory(None)
    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [r.name for r in replies] == ["recall_memory", "explore_memory", "memory_timeline"]
    explored_id = out["messages"][3].tool_calls[0]["args"]["memory_id"]
    assert replies[1].content == shared.explore(explored_id, namespace=("memories", "maya")).describe()
    assert replies[2].content == shared.timeline("2026-04-01", namespace=("memories", "maya"), page_size=10).describe()
