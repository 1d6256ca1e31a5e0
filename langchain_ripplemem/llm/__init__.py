"""Opt-in chat-model calls (structured output, usage) and what went wrong in them."""
