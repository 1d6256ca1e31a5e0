"""The LangGraph store tests RippleMemStore is not held to are the ones docs/langgraph_store.md lists, with why."""

from __future__ import annotations

from pathlib import Path

from tests.langgraph_store_contract.ripplemem_contract import NOT_APPLICABLE, NOT_RUN, markdown_tables

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_list_every_test_that_does_not_apply_and_why():
    assert NOT_APPLICABLE and all(reason.strip() for reason in [*NOT_APPLICABLE.values(), *NOT_RUN.values()])
    assert markdown_tables() in (ROOT / "docs" / "langgraph_store.md").read_text(encoding="utf-8")
