"""Serving a memory: the MCP server and the one memory behind the served LangGraph graphs."""
