"""Input that shows nothing is empty on every surface (issue 52): namespace labels that are blank
or hold a tab, queries of zero-width characters only; and what ``namespace=None`` means."""

from __future__ import annotations

import json

import pytest
from langgraph.store.base import InvalidNamespaceError as LangGraphInvalidNamespaceError

from langchain_ripplemem.errors import InvalidNamespaceError
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import is_blank, validate_namespace
from langchain_ripplemem.stores import RippleMemStore
from langchain_ripplemem.tools import create_recall_tool, create_remember_tool

from .conftest import BagOfWordsEmbeddings, filled_memory
from .test_cli_store_commands import cli, ingest
from .test_papercuts import one_turn

NS = ("users", "maya")
# Zero-width space, non-joiner, joiner, word joiner, byte order mark, soft hyphen: all format characters (Cf).
INVISIBLE = ["\u200b", "\u200b\u200c\u200d", " \u2060 ", "\ufeff", "\u00ad", "\u200b\t\u200b"]


@pytest.fixture(scope="module")
def memory() -> RippleMem:
    return filled_memory(NS, write_config=None)


# -- namespace labels --------------------------------------------------------------------
@pytest.mark.parametrize(("namespace", "message"), [
    (" ", "labels must show something, got the blank label ' '"),
    ("users/ ", "blank label ' ' in ('users', ' ')"),
    (("users", "\t"), "blank label '\\t'"),
    ("users/\u200b", "blank label '\\u200b'"),
    ("users/a\tb", "cannot contain control characters (tab, newline, ...), got 'a\\tb'"),
    (("users", "maya\n"), "cannot contain control characters (tab, newline, ...), got 'maya\\n'"),
])
def test_a_blank_label_or_one_with_a_control_character_is_refused_naming_it(namespace, message):
    with pytest.raises(InvalidNamespaceError) as error:
        validate_namespace(namespace)
    assert message in str(error.value)


def test_labels_that_show_something_are_kept_as_written():
    assert validate_namespace("users/Zoë Müller") == ("users", "Zoë Müller")
    assert validate_namespace(("team", "👩\u200d💻")) == ("team", "👩\u200d💻")  # a joiner inside an emoji


def test_the_cli_refuses_a_blank_namespace_and_stores_nothing(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", one_turn())
    for argv in (["list"], ["stats"], ["recall", "cat?"]):
        with pytest.raises(SystemExit) as exit_info:
            cli(capsys, *argv, "--persist", store, "--namespace", " ")
        assert exit_info.value.code == 2 and "blank label ' '" in capsys.readouterr().err
    file = tmp_path / "one.json"
    file.write_text(one_turn().model_dump_json(), encoding="utf-8")
    with pytest.raises(SystemExit):
        cli(capsys, "ingest", file, "--persist", store, "--namespace", "users/a\tb")
    assert "cannot contain control characters (tab, newline, ...), got 'a\\tb'" in capsys.readouterr().err
    code, out, _ = cli(capsys, "list", "--persist", store, "--json")
    assert code == 0 and [entry["namespace"] for entry in json.loads(out)] == [["users", "maya"]]


def test_the_store_and_the_memory_refuse_a_blank_label(memory):
    store = RippleMemStore(memory)
    with pytest.raises(LangGraphInvalidNamespaceError, match="blank label"):
        store.put(("users", " "), "k", {"text": "hello"})
    with pytest.raises(InvalidNamespaceError, match="blank label"):
        memory.add_messages([("user", "hello")], namespace=("users", "   "))


# -- what namespace=None means ------------------------------------------------------------
def test_namespace_none_is_the_memorys_default_namespace_where_optional_and_refused_where_required():
    memory = RippleMem(BagOfWordsEmbeddings(), namespace="users/ana")
    report = memory.add_messages([("user", "I moved to Lisbon in May.")], namespace=None)
    assert report.namespace == ("users", "ana") and memory.namespaces() == [("users", "ana")]
    assert memory.recall("Lisbon", namespace=None).namespace == ("users", "ana")
    assert memory.stats(None).units == 1 and len(memory.list_units(None)) == 1
    for required in (memory.reader.prepare, memory.reader.namespace_index, memory.delete_namespace):
        with pytest.raises(InvalidNamespaceError, match="got None"):
            required(None)  # type: ignore[arg-type]
    assert memory.stats().units == 1  # delete_namespace(None) deleted nothing


# -- queries of invisible characters --------------------------------------------------------
@pytest.mark.parametrize("text", INVISIBLE)
def test_invisible_text_is_blank(text):
    assert is_blank(text) and not is_blank(text + "a")


@pytest.mark.parametrize("query", INVISIBLE)
def test_a_query_of_invisible_characters_is_refused_like_spaces(memory, query):
    with pytest.raises(ValueError, match="query must be a non-empty string"):
        memory.recall(query, namespace=NS)
    with pytest.raises(ValueError, match="query must be a non-empty string"):
        memory.as_retriever(namespace=NS).invoke(query)
    config = {"configurable": {"user_id": "maya"}}
    assert create_recall_tool(memory, namespace=NS).invoke({"query": query}, config) == \
        "query must be a non-empty question or topic"
    assert create_remember_tool(memory, namespace=NS).invoke({"content": query}, config) == \
        "content must be a non-empty statement"


def test_a_store_search_with_an_invisible_query_lists_as_without_one(memory):
    store = RippleMemStore(memory)
    store.put(("people", "ana"), "home", {"text": "Ana lives in Lisbon."})
    listed = store.search(("people", "ana"), query="\u200b\u200d")
    assert [(i.key, i.score) for i in listed] == [(i.key, i.score) for i in store.search(("people", "ana"))]


def test_the_cli_refuses_an_invisible_question(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", one_turn())
    code, out, err = cli(capsys, "recall", "\u200b\u200b", "--persist", store, "--namespace", "users/maya")
    assert code == 2 and out == "" and err.startswith("error: query must be a non-empty string, got '\\u200b\\u200b'")
