"""``ripplemem mcp`` as a client meets it: a real process over stdio and over streamable HTTP.

The SDK's own ``ClientSession`` drives the server; a LangGraph agent loads its
tools through ``langchain-mcp-adapters`` and a scripted model calls remember,
then recall. The server runs from this checkout (``python -m langchain_ripplemem.cli``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from langchain_ripplemem.schemas import RecallResult  # noqa: E402

from .conftest import ChromaServer, free_port  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STARTUP_TIMEOUT = 90.0  # hang guard for a loaded machine, not a performance threshold
ALLERGY = "Maya is allergic to shellfish, so no shrimp or oysters."


def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "langchain_ripplemem.cli", "mcp", *args]


def server_env() -> dict[str, str]:
    return {**os.environ, "ANONYMIZED_TELEMETRY": "False"}


async def remember_recall_forget(session: ClientSession) -> dict[str, object]:
    """The transcript every transport must serve the same way."""
    await session.initialize()
    tools = {t.name for t in (await session.list_tools()).tools}
    remembered = await session.call_tool("remember", {"text": ALLERGY, "speaker": "Maya"})
    recalled = await session.call_tool("recall", {"query": "What can't Maya eat?", "k": 5})
    outside = await session.call_tool("recall", {"query": "x", "namespace": "users/sam"})
    uid = remembered.structuredContent["memory_ids"][0]
    forgot = await session.call_tool("forget", {"memory_ids": [uid]})
    after = await session.call_tool("recall", {"query": "What can't Maya eat?", "k": 5})
    return {"tools": tools, "remembered": remembered, "recalled": recalled, "outside": outside, "uid": uid,
            "forgot": forgot, "after": after}


def check_transcript(out: dict) -> None:
    assert out["tools"] == {"remember", "recall", "forget", "correct", "list_namespaces", "stats", "explore_memory",
                            "memory_timeline"}
    assert not out["remembered"].isError and out["remembered"].structuredContent["namespace"] == "users/maya"
    recalled = RecallResult.model_validate(out["recalled"].structuredContent)
    assert [m.unit.id for m in recalled.memories] == [out["uid"]]
    assert "shellfish" in out["recalled"].content[0].text and recalled.rounds
    assert out["outside"].isError and "outside this server's namespace 'users/maya'" in out["outside"].content[0].text
    assert out["forgot"].structuredContent["deleted"] == 1
    assert out["after"].structuredContent["memories"] == []


async def test_stdio_remember_recall_forget(tmp_path):
    params = StdioServerParameters(command=sys.executable, args=server_command(
        "--persist", str(tmp_path / "store"), "--namespace", "users/maya")[1:], env=server_env())
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            out = await remember_recall_forget(session)
    check_transcript(out)


def test_stdio_client_leaving_ends_the_server_quietly(tmp_path):
    # The SDK closes the streams it wrapped when the session ends; the process's own stdout must stay
    # open, or the CLI's exit reports "error: I/O operation on closed file." and exits 2.
    done = subprocess.run(server_command("--persist", str(tmp_path / "store"), "--namespace", "users/maya"),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=server_env(),
                          timeout=STARTUP_TIMEOUT)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"ripplemem mcp --http did not listen on {port} (exit {process.poll()}):\n"
                         + log.read_text(errors="replace")[-2000:])


@pytest.fixture(scope="module")
def http_server(tmp_path_factory) -> Iterator[str]:
    """``ripplemem mcp --http`` on a free loopback port for this module's tests; yields its URL."""
    tmp_path = tmp_path_factory.mktemp("mcp-http")
    port, log = free_port(), tmp_path / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(server_command("--http", "--port", str(port), "--persist", str(tmp_path / "s"),
                                                  "--namespace", "users/maya"),
                                   stdout=out, stderr=subprocess.STDOUT, env=server_env(), start_new_session=True)
    try:
        wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    text = log.read_text(errors="replace")
    assert "serving users/maya at http://127.0.0.1:" in text
    # Every test's client ended its session: a normal disconnect, no ERROR with a traceback (it logged one each).
    assert "ERROR" not in text and "Traceback" not in text, text[-3000:]


async def test_streamable_http_remember_recall_forget(http_server):
    async with streamable_http_client(http_server) as (read, write, _), ClientSession(read, write) as session:
        out = await remember_recall_forget(session)
    check_transcript(out)


async def test_a_langgraph_agent_uses_the_tools_through_langchain_mcp_adapters(http_server):
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from ..unit_tests.fakes import ScriptedChatModel

    client = MultiServerMCPClient({"ripplemem": {"transport": "streamable_http", "url": http_server}})
    tools = await client.get_tools()
    assert {t.name for t in tools} >= {"remember", "recall"}
    llm = ScriptedChatModel(responses=[
        AIMessage("", tool_calls=[{"name": "remember", "args": {"text": ALLERGY}, "id": "c1"}]),
        AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "What can't Maya eat?", "k": 3}, "id": "c2"}]),
        lambda messages: f"From memory: {messages[-1].text.splitlines()[1]}",
    ])
    bound = llm.bind_tools(tools)

    async def agent(state: MessagesState) -> dict:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    out = await builder.compile().ainvoke({"messages": [("user", "Book dinner for Maya: any food limits?")]})
    remembered, recalled = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert set(llm.tools_seen[0]) >= {"remember", "recall", "forget"}
    assert remembered.status != "error" and remembered.text.startswith("Remembered 1 new memory in users/maya")
    uid = remembered.artifact["structured_content"]["memory_ids"][0]
    assert f"[{uid}]" in recalled.text and "shellfish" in recalled.text
    assert RecallResult.model_validate(recalled.artifact["structured_content"]).memories[0].unit.id == uid
    assert out["messages"][-1].content.startswith(f"From memory: - [{uid}]")


async def test_units_in_a_chroma_server_edges_on_disk(chroma_server: ChromaServer, tmp_path):
    params = StdioServerParameters(command=sys.executable, args=server_command(
        "--chroma-host", chroma_server.host, "--chroma-port", str(chroma_server.port),
        "--persist", str(tmp_path / "edges"), "--namespace", "users/maya")[1:], env=server_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        out = await remember_recall_forget(session)
    check_transcript(out)
    assert (tmp_path / "edges" / "ripplemem_edges.sqlite3").exists()
