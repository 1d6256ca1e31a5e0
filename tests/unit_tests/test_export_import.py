"""Carrying a namespace: export to a JSONL file, import into another store (issue 53 item 2, docs/export.md)."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path

import pytest

from benchmarks.small_memory import load_small_memory_cases, small_memory_conversations
from langchain_ripplemem.errors import EmbeddingModelMismatchError, InvalidExportFileError
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation, MemoryUnit
from langchain_ripplemem.storage.export_format import FORMAT_VERSION, read_export

from .conftest import BagOfWordsEmbeddings, drawn_conversation, filled_memory, make_conversation
from .test_cli_store_commands import bow_memory, cli
from .test_known_turns import CHAT, RewordingModel, memory_with

MAYA = ("users", "maya")


class OtherModel(BagOfWordsEmbeddings):
    """Another model's vectors (another width and name): a store of it cannot read bag-of-words-512 vectors."""

    dim = 256
    model_name = "bag-of-words-256"


def recalled(memory: RippleMem, question: str, namespace: tuple[str, ...]) -> list[str]:
    return [m.unit.id for m in memory.recall(question, namespace=namespace, k=10).memories]


def carried(source: RippleMem, namespace: tuple[str, ...], tmp_path: Path, *, vectors: bool = True,
            into: RippleMem | None = None) -> RippleMem:
    """``namespace`` of ``source`` exported and imported into ``into`` (default a fresh in-memory memory)."""
    path = tmp_path / f"{'-'.join(namespace)}-{'vectors' if vectors else 'plain'}.jsonl"
    source.export_namespace(namespace, path, vectors=vectors)
    target = into if into is not None else RippleMem(BagOfWordsEmbeddings())
    target.import_namespace(path)
    return target


def demo_memory(**kwargs: object) -> tuple[RippleMem, list[str]]:
    """The demo's conversation in namespace ``MAYA``, and its sample questions."""
    data = resources.files("langchain_ripplemem") / "data"
    conversation = Conversation.model_validate_json((data / "sample_conversation.json").read_text("utf-8"))
    questions = [q["question"] for q in json.loads((data / "sample_questions.json").read_text("utf-8"))]
    memory = RippleMem(BagOfWordsEmbeddings(), **kwargs)  # type: ignore[arg-type]
    memory.add_conversation(conversation, namespace=MAYA)
    return memory, questions


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    """:func:`make_conversation` in ``MAYA``, exported with its vectors."""
    path = tmp_path / "maya.jsonl"
    filled_memory(MAYA).export_namespace(MAYA, path)
    return path


# -- the same recall after the journey -------------------------------------------------
def test_small_memory_suite_recalls_the_same_ids_in_the_same_order_after_import(tmp_path: Path) -> None:
    cases = small_memory_conversations(load_small_memory_cases())
    source = RippleMem(BagOfWordsEmbeddings())
    for case in cases:
        source.add_conversation(case.conversation, namespace=(case.id,))
    target, again = RippleMem(BagOfWordsEmbeddings()), RippleMem(BagOfWordsEmbeddings())
    for case in cases:
        carried(source, (case.id,), tmp_path, into=target)
        carried(source, (case.id,), tmp_path, vectors=False, into=again)  # embedded again on import
    for case in cases:
        for question in case.questions:
            expected = recalled(source, question.question, (case.id,))
            assert len(expected) > 1
            assert recalled(target, question.question, (case.id,)) == expected, case.id
            assert recalled(again, question.question, (case.id,)) == expected, case.id


def test_demo_questions_recall_the_same_after_import_into_a_store_reopened(tmp_path: Path) -> None:
    source, questions = demo_memory()
    source.delete(source.list_units(MAYA)[3].id, namespace=MAYA)  # a gap in seq: the import keeps the numbers
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path / "store") as target:
        carried(source, MAYA, tmp_path, into=target)
        assert [u.model_dump() for u in target.list_units(MAYA, include_suppressed=True)] == \
               [u.model_dump() for u in source.list_units(MAYA, include_suppressed=True)]
        assert target.edges(MAYA) == source.edges(MAYA)
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path / "store") as reopened:
        for question in questions:
            assert recalled(reopened, question, MAYA) == recalled(source, question, MAYA), question


def test_marks_travel_suppressed_and_superseded(tmp_path: Path) -> None:
    source = RippleMem(BagOfWordsEmbeddings())
    source.add_conversation(drawn_conversation([[("Maya", "I live in Paris now.")],
                                                [("Maya", "I moved to Berlin last month.")],
                                                [("Maya", "My sister Ana studies law.")]]), namespace=MAYA)
    ana = next(u.id for u in source.list_units(MAYA) if "Ana" in u.restatement)
    source.suppress([ana], namespace=MAYA, reason="wrong sister")
    target = carried(source, MAYA, tmp_path)
    stats = target.stats(MAYA)
    assert (stats.suppressed, stats.superseded) == (1, 1) == (source.stats(MAYA).suppressed,
                                                                source.stats(MAYA).superseded)
    assert ana not in recalled(target, "What does Ana study?", MAYA)
    assert target.get([ana], namespace=MAYA)[0].metadata["suppressed"]["reason"] == "wrong sister"


# -- again, elsewhere, with another model ----------------------------------------------
def test_importing_the_same_file_again_adds_nothing(exported: Path) -> None:
    memory = RippleMem(BagOfWordsEmbeddings())
    first = memory.import_namespace(exported)
    before = (memory.stats(MAYA), memory.edges(MAYA))
    second = memory.import_namespace(exported)
    assert (first.new_units, second.new_units, second.edges) == (7, 0, 0)
    assert (memory.stats(MAYA), memory.edges(MAYA)) == before


def test_an_import_interrupted_before_its_edges_is_completed_by_running_it_again(
        exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = RippleMem(BagOfWordsEmbeddings())
    store_edges = memory.edge_backend.add

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(memory.edge_backend, "add", crash)
    with pytest.raises(KeyboardInterrupt):
        memory.import_namespace(exported)
    assert len(memory.list_units(MAYA)) == 7 and memory.edges(MAYA) == []
    monkeypatch.setattr(memory.edge_backend, "add", store_edges)
    again = memory.import_namespace(exported)
    assert again.new_units == 0 and again.edges == len(read_export(exported).edges) > 0
    assert memory.edges(MAYA) == read_export(exported).edges
    assert memory.edge_backend.linked_ids(MAYA) == read_export(exported).linked


def test_import_under_another_namespace_gets_that_namespace_s_ids_and_knows_its_turns(exported: Path) -> None:
    memory = RippleMem(BagOfWordsEmbeddings())
    report = memory.import_namespace(exported, namespace="users/maya-copy")
    copy = ("users", "maya-copy")
    units = memory.list_units(copy)
    assert report.new_units == len(units) == 7 and report.source_namespace == MAYA
    assert all(u.id == MemoryUnit.make_id(copy, u.source, u.restatement) for u in units)
    assert {(e.type, e.weight) for e in memory.edges(copy)} == {(e.type, e.weight) for e in
                                                                 read_export(exported).edges}
    assert memory.add_conversation(make_conversation(), namespace=copy).new_units == 0  # its turns are known
    assert memory.namespaces() == [copy]


@pytest.mark.parametrize("namespace", [None, "users/maya-copy"])
def test_a_chat_model_reads_no_turn_again_after_the_import(tmp_path: Path, namespace: str | None) -> None:
    """The turns' fingerprints travel with the units: adding the chat again to the imported memory calls no model."""
    source = memory_with(RewordingModel())
    assert source.add_messages(CHAT, namespace=MAYA).new_units == 6
    source.export_namespace(MAYA, tmp_path / "chat.jsonl")
    model = RewordingModel()
    target = memory_with(model)
    target.import_namespace(tmp_path / "chat.jsonl", namespace=namespace)
    assert target.add_messages(CHAT, namespace=namespace or MAYA).new_units == 0
    assert model.calls == []


def test_a_file_of_another_model_is_refused_naming_both_or_embedded_again(exported: Path) -> None:
    memory = RippleMem(OtherModel())
    with pytest.raises(EmbeddingModelMismatchError, match=r"'bag-of-words-512' \(512 dimensions\).*"
                                                          r"'bag-of-words-256' \(256 dimensions\)"):
        memory.import_namespace(exported)
    assert memory.namespaces() == []
    report = memory.import_namespace(exported, other_model="reembed")
    assert report.reembedded and report.new_units == 7
    top = memory.search("allergic to shellfish", namespace=MAYA, k=1)[0][0]
    assert "shellfish" in top.restatement
    with pytest.raises(ValueError, match="other_model"):
        memory.import_namespace(exported, other_model="guess")  # type: ignore[arg-type]


def test_import_into_a_namespace_with_other_memories_numbers_and_links_after_them(exported: Path) -> None:
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation([[("Maya", "Harbor Grill has the best oysters in Portland.")]]),
                            namespace=MAYA)
    report = memory.import_namespace(exported)
    units = memory.list_units(MAYA)
    assert report.new_units == 7 and len(units) == 8
    assert sorted(u.metadata["seq"] for u in units) == list(range(8))
    old = units[0].id
    assert any(old in (e.src, e.dst) for e in memory.edges(MAYA))  # the imported memories are linked to it


def test_async_twins(tmp_path: Path) -> None:
    source = filled_memory(MAYA)

    async def journey() -> int:
        await source.aexport_namespace(MAYA, tmp_path / "a.jsonl")
        return (await RippleMem(BagOfWordsEmbeddings()).aimport_namespace(tmp_path / "a.jsonl")).new_units

    assert asyncio.run(journey()) == 7


# -- bad files: the line named, nothing written ----------------------------------------
def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def newer(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    return [json.dumps({**header, "version": FORMAT_VERSION + 1}) + "\n", *lines[1:]]


@pytest.mark.parametrize(("damage", "message"), [
    (newer, rf"line 1: format version {FORMAT_VERSION + 1} is newer than this package reads"),
    (lambda lines: [*lines[:-1], lines[-1][:40]], r"line {last}: the line has no end: the file is cut short"),
    (lambda lines: lines[:7], r"line 7: the file ends with 6 units and 0 edges, but its header counts 7 and"),
    (lambda lines: [*lines[:2], "{not json\n", *lines[3:]], r"line 3: not JSON"),
    (lambda lines: [*lines[:3], lines[3].replace('"restatement": "', '"restatement": 7, "x": "'), *lines[4:]],
     r"line 4: bad unit: unit.restatement"),
    (lambda lines: [*lines[:-1], lines[-1].replace('"weight": ', '"weight": "heavy", "w": ')],
     r"line {last}: bad edge: weight"),
    (lambda lines: [lines[0], *lines[1:3], lines[2], *lines[3:]], r"line 4: unit \w+ is in the file twice"),
    (lambda lines: [], r"line 1: the file is empty"),
])
def test_a_bad_file_names_its_line_and_writes_nothing(exported: Path, tmp_path: Path, damage, message,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = lines_of(exported)
    bad.write_text("".join(damage(lines)), encoding="utf-8")
    message = message.replace("{last}", str(len(lines)))
    store = tmp_path / "store"
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=store) as memory:
        with pytest.raises(InvalidExportFileError, match=message):
            memory.import_namespace(bad)
        assert memory.namespaces() == [] and memory.edges(MAYA) == []
    code, _, err = cli(capsys, "import", bad, "--persist", tmp_path / "never")
    assert code == 2 and "bad.jsonl, line" in err and not (tmp_path / "never").exists()


# -- the commands ------------------------------------------------------------------------
def test_export_and_import_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, target, file = tmp_path / "src", tmp_path / "dst", tmp_path / "maya.jsonl"
    with bow_memory(str(source)) as memory:
        memory.add_conversation(make_conversation(), namespace=MAYA)
        expected = recalled(memory, "Where should Maya eat?", MAYA)
    assert cli(capsys, "export", file, "--persist", source)[0] == 2  # no --namespace: which one?
    code, out, _ = cli(capsys, "export", file, "--persist", source, "--namespace", "users/maya")
    assert code == 0 and "exported 7 units and" in out and read_export(file).header.vectors
    code, out, _ = cli(capsys, "import", file, "--persist", target, "--json")
    assert code == 0 and json.loads(out)["new_units"] == 7
    code, out, _ = cli(capsys, "import", file, "--persist", target)
    assert code == 0 and "imported 0 new of 7 units" in out
    code, out, _ = cli(capsys, "import", file, "--persist", target, "--namespace", "copy")
    assert code == 0 and "imported 7 new of 7 units" in out and "namespace 'copy'" in out
    with bow_memory(str(target)) as memory:
        assert recalled(memory, "Where should Maya eat?", MAYA) == expected
    code, _, err = cli(capsys, "export", tmp_path / "no-such-dir" / "x.jsonl", "--persist", source,
                       "--namespace", "users/maya")
    assert code == 2 and "error:" in err
    code, _, err = cli(capsys, "export", file, "--persist", source, "--namespace", "nobody")
    assert code == 2 and "holds no memories" in err
