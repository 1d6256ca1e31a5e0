"""The top-level API: sorted, every name usable, nothing no parameter takes, one error class per failure."""

import subprocess
import sys

import langgraph.store.base
import pytest

import langchain_ripplemem
from langchain_ripplemem import GraphStore, InvalidNamespaceError, RippleMemory, RippleMemStore
from langchain_ripplemem.schemas import validate_namespace
from langchain_ripplemem.storage.sqlite import SQLiteEdgeBackend, SQLiteNamespaceLog


def test_all_is_sorted_and_every_name_resolves():
    names = langchain_ripplemem.__all__
    assert names == sorted(names) and len(set(names)) == len(names)
    for name in names:
        assert getattr(langchain_ripplemem, name) is not None


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
            "langchain_ripplemem.create_mcp_server; assert 'mcp' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_one_invalid_namespace_error_a_langgraph_one(bow):
    assert issubclass(InvalidNamespaceError, langgraph.store.base.InvalidNamespaceError)
    with pytest.raises(InvalidNamespaceError):
        validate_namespace(("",))
    memory = RippleMemory(bow)
    try:
        with pytest.raises(InvalidNamespaceError):
            RippleMemStore(memory).put(("users/maya",), "k", {"text": "x"})  # a label the memory refuses
    finally:
        memory.close()


class _OneFileGraph(SQLiteEdgeBackend, SQLiteNamespaceLog):
    """Edges and the namespace log in one object, as PostgresGraph holds them."""


def test_graph_store_is_passed_once(bow, conversation):
    graph = _OneFileGraph(None)
    assert isinstance(graph, GraphStore)
    memory = RippleMemory(bow, graph_store=graph)
    try:
        memory.add_conversation(conversation, namespace=("u",))
        assert memory.edge_backend is graph and memory.namespace_log is graph
        assert graph.version(("u",)) > 0 and graph.edge_rows(("u",))
    finally:
        memory.close()
    with pytest.raises(ValueError, match="graph_store or graph_path"):
        RippleMemory(bow, graph_store=_OneFileGraph(None), graph_path="edges.sqlite3")
