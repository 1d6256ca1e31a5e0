"""What a memory is written from: LangChain messages, one remark, JSON and JSONL files; the checks they share."""

from langchain_ripplemem.conversations.files import conversation_from_json, load_conversations
from langchain_ripplemem.conversations.messages import conversation_from_messages, single_turn_conversation

__all__ = ["conversation_from_json", "conversation_from_messages", "load_conversations", "single_turn_conversation"]
