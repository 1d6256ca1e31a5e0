"""Cold opens from view snapshots: the same recalls as a warm memory, stale snapshots caught up, bad ones ignored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.errors import EmbeddingModelMismatchError
from langchain_ripplemem.index import snapshot as view_snapshot
from langchain_ripplemem.index.snapshot import SNAPSHOT_DIRNAME, IndexSnapshots, read_snapshot
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER_WRITE
from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.storage import sqlite as edge_store

from .conftest import BagOfWordsEmbeddings, make_conversation

NS, OTHER = ("users", "maya"), ("users", "sam")
QUERIES = ["What is Maya allergic to?", "Where does Sam's cousin cook?", "Who went hiking near Portland?",
           "What did Toby chew?", "When is the birthday dinner?", "What does Priya like to cook?"]
# The recommended settings, with expansion on: walks over the graph take part in every recall.
CONFIG = RecallConfig()


def dialogue(cid: str, day: int, lines: list[str]) -> Conversation:
    return Conversation.model_validate({"id": cid, "sessions": [{
        "id": "S1", "time": f"2026-05-{day:02d}T19:00:00+00:00",
        "turns": [{"id": f"{cid}:{i}", "speaker": "Maya" if i % 2 else "Sam", "text": t}
                  for i, t in enumerate(lines, 1)]}]})


MORE = [
    dialogue("c2", 3, ["Toby chewed my shoes at the dog park.", "Sam bought Toby a new leash.",
                       "Priya likes to cook Thai curry on Fridays.", "Harbor Grill has a new chef."]),
    dialogue("c3", 9, ["I booked Harbor Grill for the birthday dinner.", "Priya will bring a curry.",
                       "Maya cannot eat shrimp, remember the epipen.", "We hiked Forest Park with Toby."]),
]


def memory(path: Path, **kwargs) -> RippleMem:
    return RippleMem(BagOfWordsEmbeddings(), persist_directory=path, write_config=PAPER_WRITE, **kwargs)


def build(path: Path) -> list[list[str]]:
    """Write the fixture store; its recalls, warm."""
    with memory(path) as warm:
        for conv in [make_conversation(), *MORE]:
            warm.add_conversation(conv, namespace=NS)
        warm.add_conversation(MORE[0], namespace=OTHER)
        return recalls(warm)


def recalls(mem: RippleMem, ns=NS) -> list[list[str]]:
    return [[m.unit.id for m in mem.recall(q, namespace=ns, config=CONFIG).memories] for q in QUERIES]


def snapshot_file(path: Path, ns=NS) -> Path:
    return IndexSnapshots(path / SNAPSHOT_DIRNAME, None, "", dict().get).path(ns)  # type: ignore[arg-type]


def restored(mem: RippleMem, ns=NS) -> bool:
    """Whether the namespace's view came from a snapshot (its units are then parsed only when read)."""
    return mem.index.namespace_index(ns).snapshot_version is not None


def truth(path: Path, ns=NS) -> tuple[list[str], list[list[str]]]:
    """Unit ids and recalls of a memory that reads the store of record only."""
    with memory(path, snapshot_directory=False) as cold:
        return [u.id for u in cold.list_units(ns, include_suppressed=True)], recalls(cold, ns)


def test_a_reopened_store_recalls_what_the_warm_one_did_with_and_without_a_snapshot(tmp_path):
    warm = build(tmp_path)
    assert len(list((tmp_path / SNAPSHOT_DIRNAME).glob("*.index"))) == 2  # one per namespace
    assert read_snapshot(snapshot_file(tmp_path), NS, view_snapshot.embeddings_id(BagOfWordsEmbeddings()))
    with memory(tmp_path) as cold:
        assert restored(cold)
        assert cold.index.namespace_index(NS).units.parsed == 0  # nothing parsed before a recall reads it
        assert recalls(cold) == warm
        assert check_store(cold).ok
    ids, without = truth(tmp_path)
    assert without == warm
    with memory(tmp_path) as again:
        assert [u.id for u in again.list_units(NS, include_suppressed=True)] == ids


def test_the_walked_graph_is_the_graph_a_writer_mirrors_node_by_node(tmp_path):
    with memory(tmp_path, snapshot_directory=False) as mem:
        mirrored = mem.edge_cache.networkx(NS)  # loaded first: every write's edges are mirrored into it, in order
        for conv in [make_conversation(), *MORE]:
            mem.add_conversation(conv, namespace=NS)
        walked = mem.reader.walkable_edges(NS)
        assert mirrored.number_of_nodes() > 5
        for node in mirrored:
            assert node in walked and walked.degree(node) == mirrored.degree(node)
            # The same neighbours in the same order: a walk keeps the first of equally short paths.
            assert list(walked.adj[node].items()) == list(mirrored.adj[node].items())
        assert "no-such-unit" not in walked


def test_a_stale_snapshot_catches_up_with_writes_deletes_and_suppressions_made_after_it(tmp_path):
    build(tmp_path)
    saved = snapshot_file(tmp_path).read_bytes()
    with memory(tmp_path, snapshot_directory=False) as other:  # another process, which saves no snapshot
        other.add_conversation(dialogue("c4", 20, ["Sam adopted a cat named Miso.", "Miso hates the leash."]),
                               namespace=NS)
        units = other.list_units(NS)
        other.delete([units[1].id, units[4].id], namespace=NS)
        other.suppress([units[0].id], namespace=NS, reason="wrong")
    assert snapshot_file(tmp_path).read_bytes() == saved
    ids, expected = truth(tmp_path)
    with memory(tmp_path) as cold:
        assert restored(cold)
        assert [u.id for u in cold.list_units(NS, include_suppressed=True)] == ids
        assert cold.index.namespace_index(NS).suppressed == {units[0].id}
        assert recalls(cold) == expected
        assert "Miso" in cold.recall("What is the cat called?", namespace=NS, k=1).memories[0].unit.restatement


def test_a_namespace_dropped_after_its_snapshot_is_loaded_from_the_store(tmp_path):
    build(tmp_path)
    with memory(tmp_path, snapshot_directory=False) as other:
        other.delete_namespace(NS)
        other.add_conversation(MORE[1], namespace=NS)
    ids, expected = truth(tmp_path)
    with memory(tmp_path) as cold:
        assert not restored(cold)
        assert [u.id for u in cold.list_units(NS, include_suppressed=True)] == ids and len(ids) == 4
        assert recalls(cold) == expected


def test_a_snapshot_older_than_the_log_reaches_is_not_used(tmp_path, monkeypatch):
    build(tmp_path)
    monkeypatch.setattr(edge_store, "CHANGES_KEPT", 1)  # keep only the newest version's change row
    with memory(tmp_path, snapshot_directory=False) as other:
        for conv in MORE:
            other.add_conversation(dialogue(conv.id + "x", 25, [f"Write {conv.id} about the ferry."]), namespace=NS)
    ids, expected = truth(tmp_path)
    with memory(tmp_path) as cold:
        assert not restored(cold)
        assert [u.id for u in cold.list_units(NS, include_suppressed=True)] == ids
        assert recalls(cold) == expected


def truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def flipped(data: bytes) -> bytes:
    middle = len(data) * 3 // 4
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


@pytest.mark.parametrize("damage", [truncated, flipped, lambda data: b"", lambda data: b"not a snapshot" * 9])
def test_a_damaged_snapshot_is_ignored_and_rebuilt_with_nothing_lost(tmp_path, damage):
    warm = build(tmp_path)
    path = snapshot_file(tmp_path)
    path.write_bytes(damage(path.read_bytes()))
    with memory(tmp_path) as cold:
        assert not restored(cold)
        assert recalls(cold) == warm
    assert read_snapshot(path, NS, view_snapshot.embeddings_id(BagOfWordsEmbeddings())) is not None  # rebuilt
    with memory(tmp_path) as again:
        assert restored(again) and recalls(again) == warm


class OtherModel(BagOfWordsEmbeddings):
    model_id = "another/encoder"


def test_a_snapshot_of_another_model_format_or_build_is_ignored(tmp_path, monkeypatch):
    warm = build(tmp_path)
    # The store itself refuses another model (storage/embedding_record.py), and the snapshot would not serve it.
    with RippleMem(OtherModel(), persist_directory=tmp_path, write_config=PAPER_WRITE) as other:
        with pytest.raises(EmbeddingModelMismatchError, match="another/encoder"):
            recalls(other)
    assert read_snapshot(snapshot_file(tmp_path), NS, view_snapshot.embeddings_id(OtherModel())) is None
    with monkeypatch.context() as patch:
        patch.setattr(view_snapshot, "FORMAT", view_snapshot.FORMAT + 1)
        with memory(tmp_path) as newer:
            assert not restored(newer) and recalls(newer) == warm
    monkeypatch.setattr(view_snapshot, "code_id", lambda: "another build")
    with memory(tmp_path) as rebuilt:
        assert not restored(rebuilt) and recalls(rebuilt) == warm


def test_a_snapshot_never_serves_another_namespace(tmp_path):
    build(tmp_path)
    snapshot_file(tmp_path, OTHER).write_bytes(snapshot_file(tmp_path, NS).read_bytes())
    with memory(tmp_path) as cold:
        assert not restored(cold, OTHER)
        assert {u.namespace for u in cold.list_units(OTHER)} == {OTHER}
        assert len(cold.list_units(OTHER)) < len(cold.list_units(NS))


def test_a_crash_while_saving_leaves_the_old_snapshot(tmp_path, monkeypatch):
    build(tmp_path)
    path = snapshot_file(tmp_path)
    before = path.read_bytes()

    def crash(fd: int) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(view_snapshot.os, "fsync", crash)
    with memory(tmp_path) as mem:
        mem.add_conversation(MORE[1], namespace=OTHER)  # changes OTHER's view: close saves it, and crashes
        mem.add_conversation(dialogue("c9", 28, ["Maya paints on Sundays."]), namespace=NS)
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]  # no half-written file left
    monkeypatch.setattr(view_snapshot.os, "fsync", os.fsync)
    ids, expected = truth(tmp_path)
    with memory(tmp_path) as cold:  # the old snapshot, caught up
        assert restored(cold) and [u.id for u in cold.list_units(NS, include_suppressed=True)] == ids
        assert recalls(cold) == expected


def test_recall_over_the_walked_graph_is_recall_over_the_mirrored_graph(tmp_path, monkeypatch):
    with memory(tmp_path, snapshot_directory=False) as mem:
        mem.edge_cache.networkx(NS)
        for conv in [make_conversation(), *MORE]:
            mem.add_conversation(conv, namespace=NS)
        walked = [[(m.unit.id, m.score) for m in mem.recall(q, namespace=NS, config=CONFIG).memories]
                  for q in QUERIES]
        monkeypatch.setattr(mem.reader, "walkable_edges", mem.edge_cache.networkx)  # what recall walked before
        assert [[(m.unit.id, m.score) for m in mem.recall(q, namespace=NS, config=CONFIG).memories]
                for q in QUERIES] == walked


def test_an_index_leaving_the_cache_is_saved_and_comes_back_from_its_snapshot(tmp_path):
    from langchain_ripplemem.cache_bounds import CacheBounds

    with memory(tmp_path, cache_bounds=CacheBounds(max_namespaces=1)) as mem:
        mem.add_conversation(make_conversation(), namespace=NS)
        mem.add_conversation(MORE[0], namespace=OTHER)  # NS leaves the cache: saved as it goes
        assert snapshot_file(tmp_path).exists() and mem.index.cached(NS) is None
        mem.add_conversation(MORE[1], namespace=NS)  # back from its snapshot, then written
        assert restored(mem)
    ids, expected = truth(tmp_path)
    with memory(tmp_path) as cold:
        assert restored(cold) and [u.id for u in cold.list_units(NS, include_suppressed=True)] == ids
        assert recalls(cold) == expected


def _searches(index) -> list:
    """Every search of a view: the three views, cue scores, rarities, BM25 rows and counts."""
    from langchain_ripplemem.config import LinkingConfig

    queries = [index.units[0], index.units[3], index.units[len(index) - 1]]
    keys = sorted({k for row in index.keys for k in row})
    return [
        *(index.semantic(index.vector(u.id), 5) for u in queries),
        *(index.lexical(u.restatement, 5) for u in queries),
        *(index.lexical_scores(u.restatement).tolist() for u in queries),
        *(index.cues(u, 5, LinkingConfig(), index.vector(u.id), keys=keys[:6], key_weight=0.5) for u in queries),
        index.key_overlap(keys).tolist(), [index.rarity(k) for k in keys], [index.is_name(k) for k in keys],
        index.term_counts().tolist(), sorted(index.suppressed), dict(index.claimed_by), index.max_seq,
        index.nbytes - index.dense.nbytes,  # the matrix as allocated differs: a snapshot maps its rows only
    ]


def test_a_snapshot_restores_each_part_and_the_same_searches_before_and_after_more_writes(tmp_path):
    import numpy as np

    from langchain_ripplemem.index.marks import SUPERSEDED_BY, SUPERSEDES, with_suppression
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.index.snapshot import write_snapshot
    from langchain_ripplemem.schemas import MemoryUnit, Provenance

    texts = [turn.text for conv in [make_conversation(), *MORE] for s in conv.sessions for turn in s.turns]
    units = [MemoryUnit.create(namespace=NS, restatement=text, participants=["Maya", "Sam"][: 1 + i % 2],
                               metadata={"seq": i}, source=Provenance(conversation_id="c", session_id="s"))
             for i, text in enumerate(texts)]
    units[2] = with_suppression([units[2]], "wrong")[0]
    units[5] = units[5].model_copy(update={"metadata": {**units[5].metadata, SUPERSEDES: {units[1].id: "x"}}})
    units[3] = units[3].model_copy(update={"metadata": {**units[3].metadata, SUPERSEDED_BY: units[4].id}})
    vectors = np.random.default_rng(0).normal(size=(len(units), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    first = len(units) - 3
    index = NamespaceIndex(NS)
    index.add(units[:first], vectors[:first])
    index.lexical("shrimp", 1)  # the BM25 index in use: saved too
    write_snapshot(tmp_path / "ns.index", index, version=1, model="m")
    got = read_snapshot(tmp_path / "ns.index", NS, "m")
    assert got is not None and got[1] == 1
    back = got[0]
    assert np.array_equal(back.dense.state(len(back)), index.dense.state(len(index)))
    assert back.lexical_rows.state() == index.lexical_rows.state()
    cue_state, saved_cues = back.cue_rows.state(len(back)), index.cue_rows.state(len(index))
    assert np.array_equal(cue_state.pop("row_cues"), saved_cues.pop("row_cues"), equal_nan=True)
    assert cue_state == saved_cues
    assert back.lifecycle.state() == index.lifecycle.state() == {
        "suppressed": {units[2].id}, "claimed_by": {units[1].id: [units[5].id]},
        "supersedes": {units[4].id: [units[3].id]}}
    assert (back.ids, back.pos, back.max_seq, back.derived) == (index.ids, index.pos, index.max_seq, index.derived)
    assert [u.id for u in back.units] == index.ids
    assert _searches(back) == _searches(index)
    for grown in (index, back):  # rows appended after a restore read as rows appended to the view saved
        grown.add(units[first:], vectors[first:])
    assert _searches(back) == _searches(index)
    assert _searches(back.without([units[0].id])) == _searches(index.without([units[0].id]))
