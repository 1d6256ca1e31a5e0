"""Recollection as a LangGraph StateGraph."""

from langchain_ripplemem.recall.controller import HeuristicController, LLMController
from langchain_ripplemem.recall.graph import NODE_NAMES, build_recall_graph
from langchain_ripplemem.recall.state import RecallContext, RecallInput, RecallOutput, RecallState

__all__ = [
    "NODE_NAMES",
    "HeuristicController",
    "LLMController",
    "RecallContext",
    "RecallInput",
    "RecallOutput",
    "RecallState",
    "build_recall_graph",
]
