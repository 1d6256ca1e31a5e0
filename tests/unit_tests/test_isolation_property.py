"""Tenant isolation as a property: random interleavings never leak a unit across namespaces.

A Hypothesis state machine drives one memory through put (add_conversation of
small generated conversations), recall, delete (own and foreign ids) and
delete_namespace over three namespaces, two of which are prefix-related. A
model tracks which unit ids each namespace owns. After every step: list_units
is exactly the namespace's units, get/recall never return another namespace's
unit, every edge has both ends in its namespace, and check_store is ok.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings

NAMESPACES = [("org", "a"), ("org", "b"), ("org", "a", "team")]  # a prefix pair on purpose
WORDS = ["shellfish", "allergy", "hiking", "Portland", "dinner", "birthday", "violin", "garden",
         "oysters", "doctor", "museum", "Seattle", "marathon", "chess"]
SPEAKERS = ["Maya", "Sam", "Priya"]

turn_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(
    lambda ws: "I talked about " + " and ".join(ws) + ".")
session = st.tuples(st.integers(1, 28), st.lists(st.tuples(st.sampled_from(SPEAKERS), turn_text),
                                                  min_size=1, max_size=4))


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    # Few conversation ids: the same conversation lands in several namespaces, and grows.
    cid = draw(st.sampled_from(["c1", "c2", "c3"]))
    sessions = draw(st.lists(session, min_size=1, max_size=2))
    return Conversation.model_validate({"id": cid, "sessions": [
        {"id": f"S{s}", "time": f"2026-05-{day:02d}T12:00:00+00:00",
         "turns": [{"id": f"S{s}:{t}", "speaker": sp, "text": text} for t, (sp, text) in enumerate(turns)]}
        for s, (day, turns) in enumerate(sessions)]})


class IsolationMachine(RuleBasedStateMachine):
    """Model: namespace -> ids it owns."""

    @initialize()
    def start(self) -> None:
        self.memory = RippleMemory(BagOfWordsEmbeddings())
        self.owned: dict[tuple[str, ...], set[str]] = {ns: set() for ns in NAMESPACES}

    def _foreign(self, ns: tuple[str, ...]) -> set[str]:
        return {uid for other, ids in self.owned.items() if other != ns for uid in ids}

    @rule(ns=st.sampled_from(NAMESPACES), conv=conversations())
    def put(self, ns: tuple[str, ...], conv: Conversation) -> None:
        report = self.memory.add_conversation(conv, namespace=ns)
        assert report.namespace == ns
        assert not set(report.unit_ids) & self._foreign(ns)
        # A turn stored before with other text was edited: its old units are replaced, in this namespace only.
        assert set(report.replaced) <= self.owned[ns]
        self.owned[ns] = (self.owned[ns] | set(report.unit_ids)) - set(report.replaced)

    @rule(ns=st.sampled_from(NAMESPACES), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
          k=st.integers(1, 8))
    def recall(self, ns: tuple[str, ...], words: list[str], k: int) -> None:
        result = self.memory.recall(" ".join(words), namespace=ns, k=k)
        ids = {m.unit.id for m in result.memories}
        assert ids <= self.owned[ns], ids - self.owned[ns]
        assert all(m.unit.namespace == ns for m in result.memories)

    @rule(ns=st.sampled_from(NAMESPACES), data=st.data())
    def delete(self, ns: tuple[str, ...], data: st.DataObject) -> None:
        own = sorted(self.owned[ns])
        foreign = sorted(self._foreign(ns))
        mine = data.draw(st.lists(st.sampled_from(own), unique=True, max_size=3) if own else st.just([]))
        theirs = data.draw(st.lists(st.sampled_from(foreign), unique=True, max_size=3)
                           if foreign else st.just([]))
        # Ids of other namespaces passed to this namespace's delete must survive.
        assert self.memory.delete([*theirs, *mine, "no-such-id"], namespace=ns).units == len(mine)
        self.owned[ns] -= set(mine)

    @rule(ns=st.sampled_from(NAMESPACES))
    def delete_namespace(self, ns: tuple[str, ...]) -> None:
        assert self.memory.delete_namespace(ns).units == len(self.owned[ns])
        self.owned[ns] = set()

    @invariant()
    def isolated(self) -> None:
        everything = sorted(uid for ids in self.owned.values() for uid in ids)
        for ns in NAMESPACES:
            units = self.memory.list_units(ns)
            assert {u.id for u in units} == self.owned[ns]
            assert all(u.namespace == ns for u in units)
            assert {u.id for u in self.memory.get(everything, namespace=ns)} == self.owned[ns]
            for edge in self.memory.edges(ns):
                assert edge.src in self.owned[ns] and edge.dst in self.owned[ns], edge
        assert sorted(self.memory.namespaces()) == sorted(ns for ns in NAMESPACES if self.owned[ns])
        report = check_store(self.memory)
        assert report.ok, report.summary()


IsolationMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=12, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestIsolation = IsolationMachine.TestCase
