"""The top-level API: at most 25 names, LangChain-shaped first, every name usable, one prefix, one error per failure."""

import importlib
import subprocess
import sys
import types

import langgraph.store.base
import pytest

import langchain_ripplemem
from langchain_ripplemem import RippleMem, RippleMemStore
from langchain_ripplemem.errors import InvalidNamespaceError
from langchain_ripplemem.schemas import validate_namespace
from langchain_ripplemem.storage import EdgeLogBackend
from langchain_ripplemem.storage.sqlite import SQLiteEdgeBackend, SQLiteNamespaceLog

LANGCHAIN_SHAPED = ["RippleMem", "RippleMemRetriever", "RippleMemStore", "MiniLMOnnxEmbeddings", "create_recall_tool",
                    "create_remember_tool", "create_correct_tool", "build_recall_graph"]


def test_at_most_25_names_the_langchain_shaped_first_and_every_name_resolves():
    names = langchain_ripplemem.__all__
    assert len(names) <= 25 and len(set(names)) == len(names)
    assert names[:len(LANGCHAIN_SHAPED)] == LANGCHAIN_SHAPED
    for name in names:
        assert getattr(langchain_ripplemem, name) is not None
    public = {name for name in dir(langchain_ripplemem) if not name.startswith("_")
              and not isinstance(getattr(langchain_ripplemem, name), types.ModuleType)} - {"annotations", "Any"}
    assert public <= set(names), f"importable but not in __all__: {sorted(public - set(names))}"


def test_public_classes_of_the_vendor_carry_one_prefix():
    vendor = [name for name in langchain_ripplemem.__all__ if name.startswith("Ripple")]
    assert vendor and all(name.startswith("RippleMem") and not name.startswith("RippleMemory") for name in vendor)


def test_storage_backends_and_protocols_come_from_the_storage_package():
    storage = importlib.import_module("langchain_ripplemem.storage")
    for name in ("UnitBackend", "EdgeBackend", "NamespaceLog", "EdgeLogBackend", "ChromaUnitBackend",
                 "SQLiteEdgeBackend", "SQLiteNamespaceLog", "PostgresEdgeBackend", "StoreLockedError"):
        assert name in storage.__all__ and getattr(storage, name) is not None
    code = ("import sys, langchain_ripplemem.storage as s; s.UnitBackend; "
            "assert 'chromadb' not in sys.modules and 'psycopg' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_names_no_parameter_accepts_are_not_exported():
    for name in ("HeuristicController", "LLMController", "Hit", "ExpansionTarget", "RoundTrace", "QueryCues",
                 "Usage"):
        assert name not in langchain_ripplemem.__all__
        with pytest.raises(AttributeError):
            getattr(langchain_ripplemem, name)


def test_error_names_end_in_error():
    for name in langchain_ripplemem.__all__:
        value = getattr(langchain_ripplemem, name)
        if isinstance(value, type) and issubclass(value, BaseException) and not issubclass(value, Warning):
            assert name.endswith("Error"), name


def test_importing_the_package_loads_neither_mcp_nor_chromadb():
    code = ("import sys, langchain_ripplemem; assert 'mcp' not in sys.modules and 'chromadb' not in sys.modules; "
            "langchain_ripplemem.RippleMem; import langchain_ripplemem.server.mcp; assert 'mcp' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_one_invalid_namespace_error_a_langgraph_one(bow):
    assert issubclass(InvalidNamespaceError, langgraph.store.base.InvalidNamespaceError)
    with pytest.raises(InvalidNamespaceError):
        validate_namespace(("",))
    memory = RippleMem(bow)
    try:
        with pytest.raises(InvalidNamespaceError):
            RippleMemStore(memory).put(("users/maya",), "k", {"text": "x"})  # a label the memory refuses
    finally:
        memory.close()


class _OneFileGraph(SQLiteEdgeBackend, SQLiteNamespaceLog):
    """Edges and the namespace log in one object, as PostgresEdgeBackend holds them."""


def test_graph_store_is_passed_once(bow, conversation):
    graph = _OneFileGraph(None)
    assert isinstance(graph, EdgeLogBackend)
    memory = RippleMem(bow, edge_backend=graph)
    try:
        memory.add_conversation(conversation, namespace=("u",))
        assert memory.edge_backend is graph and memory.namespace_log is graph
        assert graph.version(("u",)) > 0 and graph.edge_rows(("u",))
    finally:
        memory.close()
    with pytest.raises(ValueError, match="edge_backend or edges_path"):
        RippleMem(bow, edge_backend=_OneFileGraph(None), edges_path="edges.sqlite3")
