"""`ripplemem ingest --llm`: LLM extraction from the command line, as `ripplemem mcp --llm` has it.

The model is ``openai:MODEL`` pointed at a local OpenAI-compatible server by
``OPENAI_BASE_URL``, the way a user reaches llama.cpp or vLLM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_ripplemem.cli import main
from langchain_ripplemem.memory import RippleMem

from .conftest import BagOfWordsEmbeddings, make_conversation
from .openai_server import content
from .test_chat_openai import EVENTS_1, EVENTS_2, sent_schema
from .test_cli_store_commands import write_conversations

EVENTS = {"events": EVENTS_1["events"] + EVENTS_2["events"]}  # every turn of make_conversation()


def bow_memory(persist: str, llm=None) -> RippleMem:
    return RippleMem(BagOfWordsEmbeddings(), persist_directory=persist, llm=llm)


@pytest.fixture
def server_env(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    return openai_server


def test_ingest_with_llm_extracts_with_that_model(server_env, tmp_path: Path, capsys):
    server_env.script(content(EVENTS))
    file = write_conversations(tmp_path / "c1.json", make_conversation())
    store = tmp_path / "store"
    code = main(["ingest", str(file), "--persist", str(store), "--quiet", "--llm", "openai:gpt-4.1-mini"],
                memory_factory=bow_memory)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("1 conversation -> 5 units (5 new), ") and "0 failed windows" in out
    (request,) = server_env.requests
    assert request["model"] == "gpt-4.1-mini" and sent_schema(request) == "json_schema:ExtractionOutput"
    with bow_memory(str(store)) as memory:
        units = memory.list_units(("default",))
    assert sorted(u.restatement for u in units) == sorted(e["restatement"] for e in EVENTS["events"])
    assert {u.metadata["extractor"] for u in units} == {"llm"}


def test_ingest_without_llm_stays_offline(server_env, tmp_path: Path, capsys):
    file = write_conversations(tmp_path / "c1.json", make_conversation())
    assert main(["ingest", str(file), "--persist", str(tmp_path / "store"), "--quiet"], memory_factory=bow_memory) == 0
    assert server_env.requests == [] and "0 failed windows" in capsys.readouterr().out


def test_a_bad_llm_value_is_named_and_creates_no_store(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    file = write_conversations(tmp_path / "c1.json", make_conversation())
    store = tmp_path / "store"
    code = main(["ingest", str(file), "--persist", str(store), "--llm", "openai:gpt-4.1-mini"],
                memory_factory=bow_memory)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --llm 'openai:gpt-4.1-mini': ") and "OPENAI_API_KEY" in err
    assert not store.exists()


@pytest.mark.parametrize("command", ["ingest", "mcp"])
def test_both_commands_describe_llm_alike(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--llm PROVIDER:MODEL opt-in chat model for extraction" in text
    assert "openai:MODEL with OPENAI_BASE_URL and OPENAI_API_KEY set" in text
