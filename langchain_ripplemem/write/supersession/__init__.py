"""Knowledge updates: which older memories newer ones make out of date (rules, and optionally a chat model)."""

from langchain_ripplemem.write.supersession.statement_rules import Fact, facts, refresh_supersession

__all__ = ["Fact", "facts", "refresh_supersession"]
