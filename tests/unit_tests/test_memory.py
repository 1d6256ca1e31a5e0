import inspect

import pytest
from langchain_core.messages import HumanMessage

from langchain_ripplemem.errors import InvalidConversationError, InvalidNamespaceError, MemoryClosedError
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings, make_conversation, make_unit, reopened_in_new_process


def test_ingest_reports_and_is_idempotent(bow, conversation):
    memory = RippleMem(bow)
    first = memory.add_conversation(conversation, namespace=("maya",))
    assert first.units == first.new_units == 7
    assert first.edges["structural"] > 0
    assert set(first.usage.seconds) >= {"extract", "embed", "index", "link"}
    edges = memory.edges(("maya",))
    second = memory.add_conversation(conversation, namespace=("maya",))
    assert second.units == 7 and second.new_units == 0
    assert len(memory.list_units(("maya",))) == 7
    assert memory.edges(("maya",)) == edges


def test_longer_version_adds_only_new_turns(bow, conversation):
    memory = RippleMem(bow)
    memory.add_conversation(conversation, namespace=("maya",))
    longer = conversation.model_copy(deep=True)
    longer.sessions[-1].turns.append(longer.sessions[-1].turns[0].model_copy(
        update={"id": "S3:3", "text": "I booked a table for eight people."}))
    report = memory.add_conversation(longer, namespace=("maya",))
    assert report.new_units == 1


def test_namespaces_never_share_units_or_edges(bow, conversation):
    memory = RippleMem(bow)
    memory.add_conversation(conversation, namespace=("users", "maya"))
    memory.add_conversation(make_conversation("c2"), namespace=("users", "sam"))
    maya = {u.id for u in memory.list_units(("users", "maya"))}
    sam = {u.id for u in memory.list_units(("users", "sam"))}
    assert maya and sam and not maya & sam
    for e in memory.edges(("users", "maya")):
        assert e.src in maya and e.dst in maya
    assert memory.get(list(sam), namespace=("users", "maya")) == []
    result = memory.recall("Harbor Grill dinner", namespace=("users", "sam"))
    assert {m.unit.id for m in result.memories} <= sam
    assert memory.delete_namespace(("users", "sam")).units == len(sam)
    assert {u.id for u in memory.list_units(("users", "maya"))} == maya
    assert memory.namespaces() == [("users", "maya")]


def test_two_ephemeral_memories_are_separate(bow, conversation):
    a, b = RippleMem(bow), RippleMem(bow)
    a.add_conversation(conversation, namespace=("x",))
    assert b.list_units(("x",)) == []


def test_delete_removes_units_and_their_edges(bow, conversation):
    memory = RippleMem(bow)
    memory.add_conversation(conversation, namespace=("maya",))
    victim = next(e.src for e in memory.edges(("maya",)))
    assert memory.delete([victim], namespace=("maya",)).units == 1
    assert all(victim not in (e.src, e.dst) for e in memory.edges(("maya",)))
    assert memory.get([victim], namespace=("maya",)) == []
    ids = {m.unit.id for m in memory.recall("shellfish allergy", namespace=("maya",)).memories}
    assert victim not in ids


def test_persistence_round_trip_in_a_new_process(tmp_path, bow, conversation):
    memory = RippleMem(bow, persist_directory=tmp_path)
    memory.add_conversation(conversation, namespace=("maya",))
    expected = {"units": sorted(u.id for u in memory.list_units(("maya",))),
                "edges": sorted([e.src, e.dst, e.type] for e in memory.edges(("maya",)))}
    memory.close()  # an embedded store belongs to one process at a time
    assert reopened_in_new_process(tmp_path, (
        "print(json.dumps({'units': sorted(u.id for u in m.list_units(('maya',))),"
        " 'edges': sorted([e.src, e.dst, e.type] for e in m.edges(('maya',)))}))\n")) == expected


def test_interrupted_ingest_is_linked_by_the_next_write(tmp_path, bow, conversation, monkeypatch):
    clean = RippleMem(bow)
    clean.add_conversation(conversation, namespace=("maya",))
    expected = sorted((e.src, e.dst, e.type) for e in clean.edges(("maya",)))

    crashing = RippleMem(bow, persist_directory=tmp_path)

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("simulated crash after the unit write")

    monkeypatch.setattr(crashing._write, "link", crash)
    with pytest.raises(KeyboardInterrupt):
        crashing.add_conversation(conversation, namespace=("maya",))
    monkeypatch.undo()
    reopened = RippleMem(bow, persist_directory=tmp_path)
    assert len(reopened.list_units(("maya",))) == 7
    assert reopened.edges(("maya",)) == []  # reading links nothing
    assert reopened.add_conversation(conversation, namespace=("maya",)).new_units == 0
    assert sorted((e.src, e.dst, e.type) for e in reopened.edges(("maya",))) == expected


def test_bad_input_errors_name_the_problem(bow):
    memory = RippleMem(bow)
    with pytest.raises(InvalidConversationError, match="'empty'"):
        memory.add_conversation(Conversation(id="empty", sessions=[]))
    with pytest.raises(InvalidNamespaceError, match="cannot contain '.'"):
        memory.add_conversation(make_conversation(), namespace=("a.b",))
    with pytest.raises(InvalidNamespaceError, match="langgraph"):
        memory.recall("x", namespace=("langgraph", "x"))
    with pytest.raises(ValueError, match="query"):
        memory.recall("   ")
    with pytest.raises(ValueError, match="either client or persist_directory"):
        RippleMem(bow, client=object(), persist_directory="x")


def test_custom_embeddings_without_embed_array(conversation):
    memory = RippleMem(BagOfWordsEmbeddings())
    assert memory.add_conversation(conversation).new_units == 7
    assert memory.search("shellfish allergy", namespace=("default",), k=1)


def test_namespace_strings_mean_the_same_everywhere(bow, conversation):
    """'users/alice' is ('users', 'alice') in Python as on the command line (one parsing rule)."""
    memory = RippleMem(bow)
    memory.add_conversation(conversation, namespace="users/alice")
    assert memory.namespaces() == [("users", "alice")]
    assert memory.stats(("users", "alice")).units == memory.stats("users/alice").units > 0
    for bad in ("users//alice", "/users", "users/", ("users/alice",), ("a", "b/c")):
        with pytest.raises(InvalidNamespaceError, match="label"):
            memory.stats(bad)


def test_delete_conversation_and_stats(bow, conversation):
    memory = RippleMem(bow)
    memory.add_conversation(conversation, namespace=("maya",))
    memory.add_conversation(make_conversation("c2"), namespace=("maya",))
    memory.add_conversation(make_conversation("c3"), namespace=("sam",))
    stats = memory.stats(("maya",))
    assert stats.conversations == [conversation.id, "c2"]
    assert stats.units == len(memory.list_units(("maya",)))
    assert stats.edges["semantic"] + stats.edges["structural"] > 0
    assert stats.first_time is not None and stats.first_time <= stats.last_time
    gone = memory.delete_conversation("c2", namespace=("maya",))
    assert gone.units > 0
    assert memory.stats(("maya",)).conversations == [conversation.id]
    assert all(u.source.conversation_id != "c2" for u in memory.list_units(("maya",)))
    assert memory.delete_conversation("c2", namespace=("maya",)).units == 0
    assert memory.stats(("sam",)).conversations == ["c3"]  # another namespace is untouched
    with pytest.raises(ValueError, match="conversation_id"):
        memory.delete_conversation("", namespace=("maya",))


def test_add_messages_refuses_a_bare_string_and_writes_nothing(bow):
    memory = RippleMem(bow)
    with pytest.raises(InvalidConversationError, match="must be a list of chat messages, got str"):
        memory.add_messages("We adopted a beagle called Biscuit.", namespace="maya")  # type: ignore[arg-type]
    assert memory.namespaces() == []
    report = memory.add_messages([{"role": "user", "content": "We adopted a beagle called Biscuit."}],
                                 namespace="maya")
    assert report.units == 1 and memory.recall("dog's name?", namespace="maya").memories


def test_adding_a_chat_history_again_as_it_grows_adds_only_the_new_messages(bow):
    from langchain_core.messages import AIMessage, HumanMessage

    memory = RippleMem(bow)
    history = [HumanMessage("I adopted a beagle called Biscuit."), AIMessage("Lovely name!")]
    assert memory.add_messages(history, namespace="maya").new_units == 2
    history += [HumanMessage("Biscuit hates the vet."), AIMessage("Poor Biscuit.")]
    report = memory.add_messages(history, namespace="maya")
    assert report.new_units == 2  # before: 4, every earlier message remembered twice
    texts = [unit.restatement for unit in memory.list_units("maya")]
    assert len(texts) == len(set(texts)) == 4
    assert len(memory.stats("maya").conversations) == 1


def test_a_thread_trimmed_at_the_front_adds_nothing_twice_under_its_conversation_id(bow):
    from langchain_core.messages import AIMessage, HumanMessage

    memory = RippleMem(bow)
    said = [HumanMessage("I adopted a beagle.", id="m1"), AIMessage("Lovely!", id="m2"),
            HumanMessage("He is called Biscuit.", id="m3"), AIMessage("Cute name.", id="m4"),
            HumanMessage("Biscuit hates the vet.", id="m5"), AIMessage("Poor Biscuit.", id="m6")]
    assert memory.add_messages(said[:4], namespace="maya", conversation_id="thread-1").new_units == 4
    assert memory.add_messages(said[2:], namespace="maya", conversation_id="thread-1").new_units == 2
    assert len(memory.list_units("maya")) == 6


def test_an_asker_who_is_no_speaker_is_named_in_the_warnings(bow, conversation):
    memory = RippleMem(bow)
    memory.add_conversation(conversation, namespace="maya")
    typo = memory.recall("What am I allergic to?", namespace="maya", asker="Maia")
    assert any("asker 'Maia' is not a speaker" in w and "maya, sam" in w for w in typo.warnings)
    right = memory.recall("What am I allergic to?", namespace="maya", asker="Maya")
    assert not right.warnings


def test_a_closed_memory_says_so_on_every_read_and_write(bow, tmp_path):
    from langchain_core.messages import HumanMessage

    from langchain_ripplemem.errors import MemoryClosedError

    with RippleMem(bow, persist_directory=tmp_path) as memory:
        memory.add_messages([HumanMessage("We adopted a beagle called Biscuit.")], namespace="maya")
    for call in (lambda: memory.recall("dog?", namespace="maya"), lambda: memory.search("dog", namespace="maya"),
                 lambda: memory.add_messages([HumanMessage("Biscuit is two.")], namespace="maya"),
                 lambda: memory.list_units("maya"), lambda: memory.delete_namespace("maya"), memory.namespaces):
        with pytest.raises(MemoryClosedError, match="is closed"):  # before: sqlite3's "closed database"
            call()
    memory.close()  # closing again is fine
    with RippleMem(bow, persist_directory=tmp_path) as reopened:
        assert len(reopened.list_units("maya")) == 1


# -- the embedding model a store was built with (issue 36, item 7) ------------------------------
class TinyModel(BagOfWordsEmbeddings):
    """Another model: 16 dimensions."""

    dim, model_name = 16, "tiny-16"


class SameNameNarrower(BagOfWordsEmbeddings):
    dim = 16  # the fixture model's name, another width (a model whose output width is a setting)


class OtherNameSameWidth(BagOfWordsEmbeddings):
    model_name = "another-512"


def _store_state(memory: RippleMem, ns: tuple[str, ...]) -> tuple:
    """What a store holds: units, edges, the namespace's version, the model record."""
    return (sorted(u.model_dump_json() for u in memory.list_units(ns, include_suppressed=True)),
            sorted((e.src, e.dst, e.type) for e in memory.edges(ns)), memory.namespace_log.version(ns),
            memory.unit_backend.collection.metadata)


def test_a_store_of_another_embedding_model_names_both_and_writes_nothing(tmp_path, bow, conversation):
    from langchain_ripplemem.errors import EmbeddingModelMismatchError

    with RippleMem(bow, persist_directory=tmp_path) as built:
        built.add_conversation(conversation, namespace="maya")
        before = _store_state(built, ("maya",))
    assert before[3]["embedding_model"] == "bag-of-words-512" and before[3]["embedding_dimension"] == 512
    with RippleMem(TinyModel(), persist_directory=tmp_path) as other:
        for call in (lambda: other.recall("What is Maya allergic to?", namespace="maya"),  # was numpy's matmul error
                     lambda: other.search("shellfish", namespace="maya"),
                     lambda: other.add_conversation(make_conversation("c2"), namespace="maya"),  # was Chroma's
                     lambda: other.add_conversation(make_conversation("c3"), namespace="sam")):
            with pytest.raises(EmbeddingModelMismatchError, match=r"the store in .* was built with embedding model "
                               r"'bag-of-words-512' \(512 dimensions\) and cannot be used with 'tiny-16' "
                               r"\(16 dimensions\)"):
                call()
        assert len(other.list_units("maya")) == 7 and other.stats("maya").units == 7  # no vectors needed
    with RippleMem(bow, persist_directory=tmp_path) as reopened:
        assert _store_state(reopened, ("maya",)) == before and reopened.namespaces() == [("maya",)]
        assert reopened.recall("What is Maya allergic to?", namespace="maya").memories


@pytest.mark.parametrize(("model", "passed"), [(SameNameNarrower, "'bag-of-words-512' (16 dimensions)"),
                                               (OtherNameSameWidth, "'another-512' (512 dimensions)")])
def test_the_same_name_at_another_width_and_another_name_at_the_same_width_are_mismatches(
        tmp_path, bow, conversation, model, passed):
    from langchain_ripplemem.errors import EmbeddingModelMismatchError

    with RippleMem(bow, persist_directory=tmp_path) as built:
        built.add_conversation(conversation, namespace="maya")
    with RippleMem(model(), persist_directory=tmp_path) as other:
        with pytest.raises(EmbeddingModelMismatchError) as raised:
            other.recall("What is Maya allergic to?", namespace="maya")
    assert "'bag-of-words-512' (512 dimensions)" in str(raised.value) and passed in str(raised.value)


def test_a_store_from_before_models_were_recorded_is_checked_by_width_and_records_its_next_write(
        tmp_path, bow, conversation):
    from langchain_ripplemem.errors import EmbeddingModelMismatchError

    with RippleMem(bow, persist_directory=tmp_path) as built:
        built.add_conversation(conversation, namespace="maya")
        built.unit_backend.collection.modify(metadata={"made_by": "an older release"})  # no model recorded
    with RippleMem(TinyModel(), persist_directory=tmp_path) as other:
        with pytest.raises(EmbeddingModelMismatchError, match=r"an unrecorded model \(512 dimensions\)"):
            other.recall("What is Maya allergic to?", namespace="maya")
    with RippleMem(bow, persist_directory=tmp_path) as reopened:
        assert reopened.recall("What is Maya allergic to?", namespace="maya").memories
        assert reopened.unit_backend.collection.metadata == {"made_by": "an older release"}  # reads record nothing
        reopened.add_conversation(make_conversation("c2"), namespace="maya")
    with RippleMem(bow, persist_directory=tmp_path) as recorded:
        assert recorded.unit_backend.collection.metadata == {
            "made_by": "an older release", "embedding_model": "bag-of-words-512", "embedding_dimension": 512}
    with RippleMem(OtherNameSameWidth(), persist_directory=tmp_path) as other:
        with pytest.raises(EmbeddingModelMismatchError, match="'bag-of-words-512'"):
            other.search("shellfish", namespace="maya")


def test_a_unit_backend_refuses_vectors_of_another_width_before_chroma_sees_them(tmp_path):
    import numpy as np

    from langchain_ripplemem.errors import EmbeddingModelMismatchError
    from langchain_ripplemem.storage.chroma import ChromaUnitBackend

    backend = ChromaUnitBackend(persist_directory=tmp_path)
    backend.use_embedding_model("m")
    backend.upsert(("maya",), [make_unit("Maya: hi", namespace=("maya",))], np.ones((1, 4), dtype=np.float32))
    backend.close()
    again = ChromaUnitBackend(persist_directory=tmp_path)
    try:
        assert again.embedding_model() == ("m", 4)
        again.use_embedding_model("m")
        with pytest.raises(EmbeddingModelMismatchError, match=r"'m' \(4 dimensions\).*'m' \(3 dimensions\)"):
            again.upsert(("maya",), [make_unit("Maya: bye", namespace=("maya",))], np.ones((1, 3), dtype=np.float32))
        assert again.collection.count() == 1
    finally:
        again.close()


# -- one public face: the methods a user calls, each with an async twin (issue 51, item 5) ----------------

READS_AND_WRITES = ["add_conversation", "add_messages", "get", "list_units", "edges", "namespaces", "search", "recall",
                    "delete", "delete_conversation", "stats", "suppress", "unsuppress", "update_metadata",
                    "delete_namespace", "close", "export_namespace", "import_namespace", "explore", "timeline"]


def test_the_facade_holds_only_what_a_user_calls_and_every_read_or_write_has_an_async_twin():
    # The facade's own classes: RippleMem and the mixins its methods live in (memory_lifecycle.py).
    facade = [vars(cls) for cls in RippleMem.__mro__ if cls is not object]
    methods = {name for members in facade for name, value in members.items()
               if not name.startswith("_") and inspect.isfunction(value)}
    assert methods == {*READS_AND_WRITES, *(f"a{name}" for name in READS_AND_WRITES), "as_retriever"}
    for name in READS_AND_WRITES:
        assert inspect.iscoroutinefunction(getattr(RippleMem, f"a{name}")), name
    # What recall reads is the reader's, not the facade's.
    reader_side = {"prepare", "namespace_index", "graph", "walkable_edges", "embed_query"}
    assert not reader_side & {name for members in facade for name in members}


async def test_the_async_twins_answer_as_the_sync_methods(bow, conversation):
    memory = RippleMem(bow)
    report = await memory.aadd_messages([HumanMessage("I adopted a beagle called Biscuit.")], namespace="n",
                                        conversation_id="chat")
    await memory.aadd_conversation(conversation, namespace="n")
    ids = [u.id for u in memory.list_units("n")]
    assert report.new_units == 1 and [u.id for u in await memory.alist_units("n")] == ids
    assert await memory.aget(ids[:2], namespace="n") == memory.get(ids[:2], namespace="n")
    assert await memory.aedges("n") == memory.edges("n") and await memory.anamespaces() == memory.namespaces()
    assert await memory.asearch("beagle", namespace="n", k=2) == memory.search("beagle", namespace="n", k=2)
    assert await memory.astats("n") == memory.stats("n")
    assert await memory.asuppress([ids[0]], namespace="n", reason="wrong") == 1
    assert await memory.aunsuppress([ids[0]], namespace="n") == 1
    assert await memory.aupdate_metadata({ids[1]: {"topic": "pets"}}, namespace="n") == 1
    assert memory.get([ids[1]], namespace="n")[0].metadata["topic"] == "pets"
    assert (await memory.adelete([ids[0]], namespace="n")).units == 1
    assert (await memory.adelete_conversation("chat", namespace="n")).units == 0  # its one unit was ids[0]
    assert (await memory.adelete_namespace("n")).units == len(ids) - 1
    await memory.aclose()
    with pytest.raises(MemoryClosedError):
        memory.list_units("n")
