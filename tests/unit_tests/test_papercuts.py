"""A new user's papercuts (issue 36, item 9): counts in the right number, read commands on an empty
namespace, turns without text, MCP arguments and warnings, controller failures, per-run graph input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.render.html_page import render_recall_html
from langchain_ripplemem.render.plain_text import format_recall
from langchain_ripplemem.schemas import Conversation, IngestReport

from .conftest import BagOfWordsEmbeddings
from .test_cli_store_commands import cli, ingest

NS = ("users", "maya")
ONE_ROUND = RecallConfig(controller={"max_rounds": 0})  # the first hop only: one round in the trace


def one_turn(text: str | None = "Maya adopted a cat called Pixel.", **extra: object) -> Conversation:
    turn = {"id": "t1", "speaker": "Maya", **({} if text is None else {"text": text}), **extra}
    return Conversation.model_validate({"id": "c1", "sessions": [{"id": "S1", "time": "2026-03-02", "turns": [turn]}]})


# -- counts ----------------------------------------------------------------------------
def test_one_of_anything_is_counted_in_the_singular():
    with RippleMem(BagOfWordsEmbeddings(), recall_config=ONE_ROUND) as memory:
        report = memory.add_conversation(one_turn(), namespace=NS)
        result = memory.recall("What is the cat called?", namespace=NS)
    assert len(result.memories) == 1 and len(result.rounds) == 1
    page = render_recall_html(result)
    assert "1 memory from 1 session \u00b7 1 round \u00b7" in page
    assert "1 hit," in page and "1 hits" not in page
    assert format_recall(result).splitlines()[1].startswith("1 memory, all from conversation c1 ")
    assert report.summary().startswith("1 turn -> 1 unit (1 new), ")
    assert "0 failed windows" in report.summary()
    assert IngestReport(namespace=NS, turns=2, units=2, failed_windows=[]).summary().startswith("2 turns -> 2 units")


def test_the_cli_counts_one_unit_in_the_singular(tmp_path, capsys):
    file = tmp_path / "one.json"
    file.write_text(one_turn().model_dump_json(), encoding="utf-8")
    code, out, err = cli(capsys, "ingest", file, "--persist", tmp_path / "store", "--quiet")
    assert code == 0, err
    assert out.startswith("1 conversation -> 1 unit (1 new), ") and "0 failed windows" in out


# -- read commands on an empty namespace -------------------------------------------------
def test_read_commands_on_an_empty_namespace_note_it_and_succeed(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", one_turn())
    for argv in (["recall", "What is the cat called?"], ["list"], ["stats"], ["stats", "--json"], ["list", "--json"]):
        code, out, err = cli(capsys, *argv, "--persist", store, "--namespace", "users/bob")
        assert code == 0, (argv, err)
        assert err.startswith("note: namespace 'users/bob' holds no memories") and "users/maya" in err
    code, out, _ = cli(capsys, "stats", "--persist", store, "--namespace", "users/bob", "--json")
    assert json.loads(out)["units"] == 0 and json.loads(out)["namespace"] == ["users", "bob"]
    code, out, _ = cli(capsys, "list", "--persist", store, "--namespace", "users/bob")
    assert out.strip() == "no units"
    code, out, _ = cli(capsys, "stats", "--persist", store, "--namespace", "users/bob")
    assert out.startswith("namespace users/bob\n  units:         0 ")
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=str(store)) as memory:
        assert memory.namespaces() == [NS]  # reading it created nothing


def test_bad_input_to_a_read_command_is_still_an_error(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", one_turn())
    with pytest.raises(SystemExit) as exit_info:  # a malformed namespace: argparse's usage error, status 2
        cli(capsys, "stats", "--persist", store, "--namespace", "users//bob")
    assert exit_info.value.code == 2 and "has an empty label" in capsys.readouterr().err
    code, _, err = cli(capsys, "forget", "--all", "--yes", "--persist", store, "--namespace", "users/bob")
    assert code == 2 and err.startswith("error: namespace 'users/bob' holds no memories")  # nothing to delete


# -- turns without text ----------------------------------------------------------------
def _conversation_file(path: Path, *turns: dict[str, object]) -> Path:
    path.write_text(json.dumps({"id": "c1", "sessions": [{"id": "S1", "time": "2026-03-02", "turns": list(turns)}]}),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("textless", [{}, {"text": None}], ids=["missing", "null"])
def test_a_turn_with_no_text_is_skipped_with_a_warning_naming_it(tmp_path, capsys, textless):
    file = _conversation_file(tmp_path / "c.json", {"id": "t1", "speaker": "Maya", **textless},
                              {"id": "t2", "speaker": "Maya", "text": "I adopted a cat called Pixel."})
    code, out, err = cli(capsys, "ingest", file, "--persist", tmp_path / "store", "--quiet")
    assert code == 0, err
    assert "warning: conversation 'c1', session 'S1', turn 't1': no text and no image caption; skipped" in err
    assert out.startswith("1 conversation -> 1 unit (1 new)")
    with RippleMem(BagOfWordsEmbeddings()) as memory:  # the library reads null as no text too
        report = memory.add_conversation(json.loads(file.read_text()), namespace=NS)
    assert report.units == 1 and any("turn 't1'" in w for w in report.warnings)


@pytest.mark.parametrize("existing", [False, True], ids=["no-directory", "empty-directory"])
@pytest.mark.parametrize("textless", [{}, {"text": None}, {"text": "  ", "image_caption": ""}],
                         ids=["missing", "null", "blank"])
def test_a_file_with_nothing_to_remember_creates_no_store(tmp_path, capsys, existing, textless):
    file = _conversation_file(tmp_path / "c.json", {"id": "t1", "speaker": "Maya", **textless})
    store = tmp_path / "store"
    if existing:
        store.mkdir()
    code, out, err = cli(capsys, "ingest", file, "--persist", store, "--quiet")
    assert code == 0, err
    assert "turn 't1': no text and no image caption; skipped" in err
    assert out.startswith("1 conversation -> 0 units: no turn has text or an image caption, nothing was stored")
    assert store.exists() is existing and (not existing or list(store.iterdir()) == [])


# -- controller failures -----------------------------------------------------------------
def test_a_failed_llm_controller_is_a_warning_of_the_result():
    from .test_recall_llm import CUES, memory_with

    memory, model = memory_with([CUES, "not json", "still not", {"anchors": "wrong type"}])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=("maya",))
    assert model.remaining == 0 and result.rounds[0].reason.startswith("controller output invalid after retries")
    reason = result.rounds[0].reason.split("; the heuristic controller decided: ")[0]
    assert result.warnings == [f"controller: {reason}; the heuristic controller decided this round"]


def test_a_controller_that_raises_is_a_warning_of_the_result():
    from .test_recall_llm import CUES, memory_with

    memory, _ = memory_with([CUES, *[ValueError("the server answered 500")] * 3])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=("maya",))
    assert len(result.warnings) == 1 and result.warnings[0].startswith("controller: ")
    assert "the server answered 500" in result.warnings[0]
    assert result.rounds[0].reason.split("; the heuristic controller decided: ")[0] in result.warnings[0]


def test_controller_anchors_it_cannot_use_are_a_warning_of_the_result():
    from .test_recall_llm import CUES, memory_with, plan

    memory, _ = memory_with([CUES, plan(anchors=["nope", "f" * 32])])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=("maya",))
    (warning,) = result.warnings
    assert warning.startswith("controller: controller named no valid anchor (got ['nope', 'fff")
    assert warning.endswith("; the heuristic controller planned this round") and result.rounds[1].expanded


# -- the recall graph on a checkpointed thread, and its schemas ----------------------------
def test_a_checkpointed_thread_does_not_carry_with_answer_or_the_answer_to_the_next_run():
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_ripplemem.recall import RecallContext, build_recall_graph
    from langchain_ripplemem.recall.checkpointing import checkpoint_serde

    from .test_recall_llm import CONFIG, CUES, memory_with

    stop = {"should_continue": False, "anchors": [], "target_restatement": "", "target_participants": [],
            "target_locations": [], "target_keywords": [], "stop_reason": "enough"}
    memory, model = memory_with([CUES, stop, "Maya is allergic to shellfish [1].", CUES, stop])
    graph = build_recall_graph(memory.reader, llm=model, checkpointer=InMemorySaver(serde=checkpoint_serde()))
    thread = {"configurable": {"thread_id": "one"}}
    context = RecallContext(namespace=("maya",), config=CONFIG)
    first = graph.invoke({"query": "Should Maya accept the dinner pick?", "with_answer": True}, thread,
                         context=context)
    assert first["answer"] == "Maya is allergic to shellfish [1]." == first["result"].answer
    second = graph.invoke({"query": "Where did Maya go hiking?"}, thread, context=context)
    assert second["result"].query == "Where did Maya go hiking?"
    assert second.get("answer") is None and second["result"].answer is None
    assert len(model.calls) == 5 and second["result"].warnings == []  # no answer asked for in the second run


def test_the_graph_schemas_list_their_fields():
    from langchain_ripplemem.recall import build_recall_graph
    from langchain_ripplemem.recall.filters import FILTER_NAMES

    with RippleMem(BagOfWordsEmbeddings()) as memory:
        graph = build_recall_graph(memory.reader)
        schema = graph.get_input_jsonschema()  # what LangGraph Server's input form shows
        assert set(schema["properties"]) == {"query", "with_answer", *FILTER_NAMES} and schema["required"] == ["query"]
        assert set(graph.get_output_jsonschema()["properties"]) == {"result", "answer"}


def test_every_typed_dict_of_the_package_comes_from_typing_extensions():
    import ast

    import langchain_ripplemem

    for path in Path(langchain_ripplemem.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "typing":
                assert "TypedDict" not in {alias.name for alias in node.names}, path


def test_a_file_with_nothing_to_remember_goes_into_a_store_that_exists(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", one_turn())
    file = _conversation_file(tmp_path / "edited.json", {"id": "t1", "speaker": "Maya", "text": None})
    code, out, err = cli(capsys, "ingest", file, "--persist", store, "--namespace", "users/maya", "--quiet")
    assert code == 0, err
    assert "turn 't1': no text and no image caption; skipped" in err
    assert out.startswith("1 conversation -> 0 units (0 new), edges: ")
