"""`ripplemem ui`'s JSON API through Starlette's TestClient: answers, errors, read-only, token, the store lock.

The page itself is tested in Chromium (tests/integration_tests/test_ui_browser.py); here every
route is asked directly, as the page's script asks it, and every refusal must be a 4xx whose
JSON ``error`` names what was wrong.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the [ui] extra")
from starlette.testclient import TestClient  # noqa: E402

from langchain_ripplemem.cli import main  # noqa: E402
from langchain_ripplemem.memory import RippleMem  # noqa: E402
from langchain_ripplemem.server.ui_access import MemoryAccess  # noqa: E402
from langchain_ripplemem.server.ui_page import TOKEN_HEADER, create_app  # noqa: E402

from .conftest import (  # noqa: E402
    ROOT,
    BagOfWordsEmbeddings,
    drawn_conversation,
    filled_memory,
    make_conversation,
    make_unit,
    reopened_in_new_process,
)

MAYA = "users/maya"
LOCAL = "http://127.0.0.1"


def client_of(memory: RippleMem, **app_options: Any) -> TestClient:
    return TestClient(create_app(MemoryAccess.held(memory), **app_options), base_url=LOCAL)


@pytest.fixture
def memory() -> Iterator[RippleMem]:
    memory = filled_memory(("users", "maya"))
    yield memory
    memory.close()


@pytest.fixture
def client(memory: RippleMem) -> TestClient:
    return client_of(memory)


def timeline(client: TestClient, **params: Any) -> dict[str, Any]:
    answer = client.get("/api/timeline", params={"namespace": MAYA, **params})
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def texts(page: dict[str, Any]) -> list[str]:
    return [unit["text"] for unit in page["units"]]


def error(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    return answer.json()["error"]  # type: ignore[no-any-return]


# -- what the page shows ---------------------------------------------------------------
def test_namespaces_and_overview_count_what_the_store_holds(client):
    assert client.get("/api/namespaces").json() == {"namespaces": [{"namespace": MAYA, "units": 7}]}
    overview = client.get("/api/overview", params={"namespace": MAYA}).json()
    assert overview["units"] == 7 and overview["first_day"] == "2026-03-02" and overview["last_day"] == "2026-04-20"
    assert [(f["label"], f["count"]) for f in overview["people"]] == [("Maya", 5), ("Sam", 3), ("Priya", 1)]
    assert {f["label"] for f in overview["places"]} == {"Harbor Grill", "Portland"}
    assert overview["conversations"] == [{"value": "c1", "label": "c1", "count": 7}]


def test_many_namespaces_are_listed_without_loading_each(tmp_path):
    from langchain_ripplemem.server.ui_api import COUNTED

    names = [f"team/n{i:02d}" for i in range(COUNTED + 2)]
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path) as memory:
        for name in names:
            memory.add_conversation(drawn_conversation([[("Maya", f"Note number {name}.")]]), namespace=name)
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)  # nothing loaded yet
    client = client_of(memory)
    listed = client.get("/api/namespaces").json()["namespaces"]
    assert [row["namespace"] for row in listed] == names
    assert [row["units"] for row in listed] == [1] * COUNTED + [None, None]
    client.get("/api/overview", params={"namespace": names[-1]})  # opened: now counted too
    assert client.get("/api/namespaces").json()["namespaces"][-1]["units"] == 1
    memory.close()


def test_the_timeline_is_in_time_order_paged_and_filtered(client):
    everything = timeline(client)
    days = [unit["start"] for unit in everything["units"]]
    assert everything["total"] == 7 and days == sorted(days)
    newest = timeline(client, order="newest")
    assert [u["id"] for u in newest["units"]][0] == [u["id"] for u in everything["units"]][-1]
    second = timeline(client, offset=2, limit=2)
    assert second["total"] == 7 and texts(second) == texts(everything)[2:4]
    assert texts(timeline(client, person="priya")) == ["Maya: I went hiking near Portland last week with Priya."]
    assert len(texts(timeline(client, place="Harbor Grill"))) == 2
    assert texts(timeline(client, text="epipen")) == ["Maya: My doctor gave me an epipen just in case."]
    assert timeline(client, person="sam", place="portland")["total"] == 1  # filters narrow together
    assert timeline(client, conversation="c1")["total"] == 7 and timeline(client, conversation="c9")["total"] == 0
    assert everything["bin_unit"] == "day" and sum(b["count"] for b in everything["bins"]) == 7
    assert everything["bins"][0] == {"start": "2026-03-02", "count": 3}  # the first session's three turns
    april = timeline(client, at="2026-04-01")
    assert april["offset"] == 5 and texts(april)[0] == "Sam: For your birthday dinner let us book Harbor Grill!"


def test_a_timeline_of_more_than_90_days_counts_per_month():
    from datetime import datetime, timezone

    import numpy as np

    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.schemas import TimeInterval
    from langchain_ripplemem.server.ui_timeline import Filters, timeline_page

    def said(month: int, day: int) -> TimeInterval:
        when = datetime(2026, month, day, 12, tzinfo=timezone.utc)
        return TimeInterval(start=when, end=when)

    index = NamespaceIndex(("n",))
    units = [make_unit(f"note {i}", time=said(month, day)) for i, (month, day) in
             enumerate([(1, 31), (1, 2), (3, 1), (6, 30), (6, 1)])] + [make_unit("no time")]
    index.add(units, np.eye(len(units), 4, dtype=np.float32))
    page = timeline_page(index, Filters())
    assert page.bin_unit == "month" and [(b.start.isoformat(), b.count) for b in page.bins] == [
        ("2026-01-01", 2), ("2026-03-01", 1), ("2026-06-01", 2)]
    assert [u.restatement for u in page.units] == ["note 1", "note 0", "note 2", "note 4", "note 3", "no time"]


def test_one_memory_has_its_source_and_links_by_type(client):
    first = timeline(client)["units"][0]
    detail = client.get("/api/memory", params={"namespace": MAYA, "id": first["id"]}).json()
    unit = detail["unit"]
    assert unit["restatement"] == first["text"] and unit["source"] == {
        "conversation_id": "c1", "session_id": "S1", "turn_ids": ["S1:1"]}
    assert unit["participants"] == ["Maya"] and unit["time"]["start"].startswith("2026-03-02")
    links = detail["links"]
    assert [row["text"] for row in links["session"]] == ["Sam: Oh no, that is rough. Good to know though."]
    assert links["session"][0]["role"] == "after"
    linked = {row["id"] for kind in ("semantic", "structural") for row in links.get(kind, [])}
    assert linked, links  # the paper's structural edges join Maya's memories
    follow = client.get("/api/memory", params={"namespace": MAYA, "id": sorted(linked)[0]}).json()
    back = {row["id"] for rows in follow["links"].values() for row in rows}
    assert first["id"] in back  # an edge is listed from both ends


def test_recall_returns_rounds_memories_and_the_picture(client):
    answer = client.post("/api/recall", json={"namespace": MAYA, "query": "What is Maya allergic to?", "k": 3})
    result = answer.json()
    assert answer.status_code == 200 and len(result["memories"]) == 3 and result["rounds"]
    assert result["memories"][0]["text"] == "Maya: I found out I am allergic to shellfish, no shrimp for me."
    assert result["picture"].startswith("<!DOCTYPE html>") and "What is Maya allergic to?" in result["picture"]


# -- forgetting ------------------------------------------------------------------------
def forget(client: TestClient, what: str, target: str, confirm: str | None = None) -> Any:
    return client.post("/api/forget", json={"namespace": MAYA, "what": what, "target": target,
                                            "confirm": target if confirm is None else confirm})


def test_forgetting_a_memory_removes_it_from_the_timeline_and_from_recall(client):
    allergy = timeline(client, text="shellfish")["units"][0]
    answer = forget(client, "memory", allergy["id"])
    assert answer.status_code == 200 and answer.json()["unit_ids"] == [allergy["id"]]
    assert timeline(client, text="shellfish")["total"] == 0 and timeline(client)["total"] == 6
    recalled = client.post("/api/recall", json={"namespace": MAYA, "query": "shellfish allergy"}).json()
    assert allergy["id"] not in {m["id"] for m in recalled["memories"]}
    assert "forgot 1 unit" in answer.json()["summary"]


def test_forgetting_a_person_or_a_conversation(client):
    assert forget(client, "person", "PRIYA").json()["unit_ids"]  # any case, as the filter matches it
    assert timeline(client, person="priya")["total"] == 0 and timeline(client)["total"] == 6
    assert len(forget(client, "conversation", "c1").json()["unit_ids"]) == 6
    assert client.get("/api/namespaces").json() == {"namespaces": []}


def test_a_forget_must_repeat_its_target_and_find_something(client):
    unit = timeline(client)["units"][0]
    assert "confirm must repeat" in error(forget(client, "memory", unit["id"], confirm="yes"), 400)
    assert "holds no memory 'nope'" in error(forget(client, "memory", "nope"), 404)
    assert "holds no memories of person 'Nobody'" in error(forget(client, "person", "Nobody"), 404)
    assert "what must be one of memory, conversation, person" in error(forget(client, "everything", "x"), 400)
    assert timeline(client)["total"] == 7  # nothing was forgotten


def test_read_only_refuses_every_forget_with_403(memory):
    client = client_of(memory, read_only=True)
    unit = timeline(client)["units"][0]
    message = error(forget(client, "memory", unit["id"]), 403)
    assert "read-only" in message and "forgetting is refused" in message
    assert timeline(client)["total"] == 7
    assert 'name="ripplemem-read-only" content="1"' in client.get("/").text


# -- bad requests ----------------------------------------------------------------------
@pytest.mark.parametrize(("params", "status", "named"), [
    ({"offset": "ten"}, 400, "offset must be a whole number, got 'ten'"),
    ({"offset": "-1"}, 400, "offset must be a whole number of at least 0"),
    ({"limit": "0"}, 400, "limit must be a whole number from 1 to 500"),
    ({"order": "sideways"}, 400, "order must be 'oldest' or 'newest'"),
    ({"at": "March"}, 400, "at must be a date as YYYY-MM-DD"),
    ({"text": "the and of"}, 400, "has no word to search for"),
    ({"colour": "red"}, 400, "unknown argument 'colour'"),
    ({"namespace": "users/nobody"}, 404, "namespace 'users/nobody' holds no memories (namespaces: users/maya)"),
    ({"namespace": ""}, 400, "/api/timeline needs namespace"),
])
def test_a_bad_timeline_request_names_the_problem(client, params, status, named):
    answer = client.get("/api/timeline", params={"namespace": MAYA, **params})
    assert named in error(answer, status)


def test_bad_requests_of_the_other_routes_name_the_problem(client):
    assert "holds no memory 'nope'" in error(client.get("/api/memory", params={"namespace": MAYA, "id": "nope"}), 404)
    assert "needs query" in error(client.post("/api/recall", json={"namespace": MAYA}), 400)
    assert "k must be from 1 to 100" in error(client.post("/api/recall", json={"namespace": MAYA, "query": "x",
                                                                                 "k": 1000}), 400)
    assert "not JSON" in error(client.post("/api/recall", content=b"{", headers={"content-type": "application/json"}),
                               400)
    assert "must be a JSON object" in error(client.post("/api/recall", json=[1]), 400)
    assert "must be JSON" in error(client.post("/api/recall", content=b"query=x",
                                               headers={"content-type": "application/x-www-form-urlencoded"}), 415)
    assert "more than" in error(client.post("/api/recall", json={"query": "x" * 70_000}), 413)
    assert "no page or API route at /api/nothing" in error(client.get("/api/nothing"), 404)
    assert "/api/recall does not take GET" in error(client.get("/api/recall"), 405)
    assert "cross-site" in error(client.post("/api/recall", json={"namespace": MAYA, "query": "x"},
                                             headers={"origin": "http://evil.example"}), 403)


# -- who may ask -----------------------------------------------------------------------
def test_without_a_token_only_loopback_names_are_answered(memory):
    rebound = TestClient(create_app(MemoryAccess.held(memory)), base_url="http://attacker.example")
    assert "not a loopback name" in error(rebound.get("/api/namespaces"), 400)
    assert "not a loopback name" in error(rebound.get("/"), 400)
    # The Host header names the address (Starlette's TestClient before 1.0 cannot parse an IPv6 base_url).
    local = TestClient(create_app(MemoryAccess.held(memory)), base_url="http://localhost")
    for host in ("localhost", "127.0.0.1:8765", "[::1]", "[::1]:8765"):
        assert local.get("/api/namespaces", headers={"host": host}).status_code == 200, host


def test_with_a_token_every_request_must_carry_it(memory):
    client = TestClient(create_app(MemoryAccess.held(memory), token="s3cret"), base_url="http://192.0.2.7")
    assert "missing or wrong token" in error(client.get("/api/namespaces"), 401)
    assert "missing or wrong token" in error(client.get("/api/namespaces", headers={TOKEN_HEADER: "guess"}), 401)
    assert client.get("/api/namespaces", headers={TOKEN_HEADER: "s3cret"}).status_code == 200
    assert "missing or wrong token" in error(client.get("/"), 401)
    assert "wrong token" in error(client.get("/?token=guess"), 401)
    entered = client.get("/?token=s3cret", follow_redirects=False)
    assert entered.status_code == 303 and "httponly" in entered.headers["set-cookie"].lower()
    page = client.get("/")  # the cookie the redirect set
    assert page.status_code == 200 and 'name="ripplemem-token" content="s3cret"' in page.text


def test_the_command_makes_and_prints_a_token_for_another_host(tmp_path, capsys, monkeypatch):
    import uvicorn

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    store = tmp_path / "store"
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=store) as memory:
        memory.add_conversation(make_conversation(), namespace=MAYA)
    factory = lambda persist: RippleMem(BagOfWordsEmbeddings(), persist_directory=persist)  # noqa: E731
    assert main(["ui", "--persist", str(store), "--host", "0.0.0.0", "--port", "9123"], memory_factory=factory) == 0
    printed = capsys.readouterr().err
    token = printed.split("?token=")[1].split()[0]
    assert len(token) >= 24 and served["host"] == "0.0.0.0" and served["port"] == 9123
    client = TestClient(served["app"], base_url="http://192.0.2.7")
    assert client.get("/api/namespaces").status_code == 401
    assert client.get("/api/namespaces", headers={TOKEN_HEADER: token}).json()["namespaces"][0]["units"] == 7
    assert main(["ui", "--persist", str(tmp_path / "none")], memory_factory=factory) == 2
    assert "no store at" in capsys.readouterr().err


# -- the store's lock ------------------------------------------------------------------
def _open_store_in_another_process(store: Path) -> subprocess.Popen[str]:
    """A process that opens the embedded store and keeps it until its stdin closes."""
    script = ("import sys\nfrom langchain_ripplemem.memory import RippleMem\n"
              "from tests.unit_tests.conftest import BagOfWordsEmbeddings\n"
              f"m = RippleMem(BagOfWordsEmbeddings(), persist_directory={str(store)!r})\n"
              "print('open', flush=True)\nsys.stdin.read()\nm.close()\n")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "open"
    return process


def test_an_idle_page_holds_no_lock_so_another_process_keeps_writing(tmp_path):
    store = tmp_path / "store"
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=store) as memory:
        memory.add_conversation(make_conversation("c1"), namespace=MAYA)
    access = MemoryAccess(lambda: RippleMem(BagOfWordsEmbeddings(), persist_directory=store), per_use=True, idle=0)
    client = TestClient(create_app(access), base_url=LOCAL)
    try:
        assert timeline(client)["total"] == 7 and not access.is_open
        # An agent's process writes while the page is open in a browser, and the page sees it.
        added = reopened_in_new_process(store, f"r = m.add_conversation({make_conversation('c2').model_dump_json()!r}"
                                               f", namespace={MAYA!r})\nprint(json.dumps(r.new_units))\nm.close()")
        assert added == 7
        assert timeline(client)["total"] == 14 and timeline(client, conversation="c2")["total"] == 7
        holder = _open_store_in_another_process(store)
        try:
            message = error(client.get("/api/namespaces"), 409)
            assert "another process holds it now" in message and str(holder.pid) in message
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=60)
        assert timeline(client)["total"] == 14  # the page answers again once the other process let go
    finally:
        access.close()
    assert access.opened >= 3  # opened for each request, not once
