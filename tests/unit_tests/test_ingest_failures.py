"""What an ingest reports: its extraction time counted once, failed windows as a warning, a CLI
ingest that stored nothing as a failure (issue 52)."""

from __future__ import annotations

import types
import warnings
from pathlib import Path

import pytest

import langchain_ripplemem.memory as memory_module
from langchain_ripplemem.cli import main
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.errors import FailedWindowsWarning
from langchain_ripplemem.extraction.base import ExtractionResult, Window
from langchain_ripplemem.extraction.rules import RuleBasedExtractor
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.schemas import Namespace, Usage

from .conftest import BagOfWordsEmbeddings, make_conversation
from .fakes import ScriptedChatModel
from .test_cli_store_commands import write_conversations

NS = ("users", "maya")
THREE_WINDOWS = WriteConfig(extraction={"window_size": 3, "window_overlap": 0})  # make_conversation: 7 turns
NOT_JSON = "I cannot do that."  # no tool call: invalid structured output, every attempt


class FakeClock:
    """``time.perf_counter`` of the memory module: it moves only when the extractor waits."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


class WaitingExtractor:
    """Rule-based extraction that waits ``wait`` seconds of the fake clock per window, and says so."""

    def __init__(self, clock: FakeClock, wait: float) -> None:
        self.clock, self.wait, self.rules = clock, wait, RuleBasedExtractor()

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        self.clock.now += self.wait
        return self.rules.extract(window, namespace).model_copy(update={"usage": Usage(seconds={"extract": self.wait})})

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        return self.extract(window, namespace)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_extraction_wait_is_counted_once(monkeypatch, mode):
    """Three windows of 1.5 s each took 4.5 s: the report said 9.0 (the wall time plus each window's own)."""
    clock = FakeClock()
    monkeypatch.setattr(memory_module, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    memory = RippleMemory(BagOfWordsEmbeddings(), extractor=WaitingExtractor(clock, 1.5), write_config=THREE_WINDOWS)
    conversation = make_conversation()
    report = memory.add_conversation(conversation, namespace=NS) if mode == "sync" else \
        await memory.aadd_conversation(conversation, namespace=NS)
    assert report.units == 7
    assert report.usage.seconds["extract"] == pytest.approx(3 * 1.5)
    assert sum(report.usage.seconds.values()) < 2 * 3 * 1.5  # the summary's total: embed, index, link are tiny


def test_failed_windows_are_a_warning_naming_them():
    model = ScriptedChatModel(responses=[NOT_JSON] * 9)  # 3 attempts (2 retries) per window
    memory = RippleMemory(BagOfWordsEmbeddings(), llm=model, write_config=THREE_WINDOWS)
    one_window = make_conversation().model_copy(update={"sessions": make_conversation().sessions[:1]})
    with pytest.warns(FailedWindowsWarning, match=r"1 of 1 extraction windows of conversation 'c1' failed, "
                      r"and nothing of them was stored .*turns S1:1, S1:2, S1:3: "):
        report = memory.add_conversation(one_window, namespace=NS)
    assert report.units == 0 and len(report.failed_windows) == 1 and model.remaining == 6


def test_an_ingest_without_failures_warns_of_nothing():
    memory = RippleMemory(BagOfWordsEmbeddings())
    with warnings.catch_warnings():
        warnings.simplefilter("error", FailedWindowsWarning)
        assert memory.add_conversation(make_conversation(), namespace=NS).units == 7


def _cli_ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                model: ScriptedChatModel) -> tuple[int, str, str]:
    monkeypatch.setenv("OPENAI_API_KEY", "test")  # --llm openai:... resolves; the factory uses the scripted model
    file = write_conversations(tmp_path / "chat.json", make_conversation())

    def scripted_memory(persist: str, llm: object = None) -> RippleMemory:
        return RippleMemory(BagOfWordsEmbeddings(), persist_directory=persist, llm=model,
                            write_config=THREE_WINDOWS)

    code = main(["ingest", str(file), "--persist", str(tmp_path / "store"), "--quiet", "--llm", "openai:gpt-4.1-mini"],
                memory_factory=scripted_memory)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_cli_ingest_that_stored_nothing_exits_1(tmp_path, capsys, monkeypatch, recwarn):
    code, out, err = _cli_ingest(tmp_path, capsys, monkeypatch, ScriptedChatModel(responses=[NOT_JSON] * 9))
    assert code == 1, err
    assert out.startswith("1 conversation -> 0 units (0 new), ") and "3 failed windows" in out
    assert err.rstrip().splitlines()[-1].startswith(
        "error: nothing was stored: 3 extraction windows failed (the warnings above say why)")
    assert not [w for w in recwarn if w.category is FailedWindowsWarning]  # the CLI says it once, its own way


def test_a_cli_ingest_that_stored_part_succeeds_with_warnings(tmp_path, capsys, monkeypatch):
    first = {"events": [{"restatement": "Maya is allergic to shellfish.", "participants": ["Maya"],
                         "kind": "fact", "turn_ids": ["S1:1", "S1:2", "S1:3"]}]}
    code, out, err = _cli_ingest(tmp_path, capsys, monkeypatch, ScriptedChatModel(responses=[first, *[NOT_JSON] * 6]))
    assert code == 0, err
    assert out.startswith("1 conversation -> 1 unit (1 new), ") and "2 failed windows" in out
    assert "attempt 3" in err and "error:" not in err
