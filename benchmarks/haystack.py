"""Haystacks for the injected suites, and the injection of a case into one.

A haystack is a long two-speaker dialogue: a LoCoMo conversation read at run
time (its text never enters this repository) or, without LoCoMo, the shipped
sample conversation repeated with its sessions moved weeks later each time
(:func:`sample_haystacks`). :func:`inject` puts one case into one haystack: the
case's ``{A}``/``{B}`` become the haystack's speakers, and each evidence or
distractor turn goes between two existing turns of the session at the case's
offset from a start session. Placement and speaker order come from a random
generator seeded with the case and haystack ids, so a run is reproducible.

One case goes into each injected copy, and each copy gets its own namespace,
so cases cannot interfere with one another.

Example:
    >>> from benchmarks.linked_cases import load_linked_cases
    >>> hay = sample_haystacks()[0]
    >>> hay.speakers, len(hay.conversation.sessions)
    (('Maya', 'Sam'), 21)
    >>> conv = inject(load_linked_cases()[0], hay)
    >>> question = conv.questions[0]
    >>> question.category_name, len(question.evidence), conv.split
    ('food_health', 3, 'tune')
    >>> all(tid in {t.id for _, t in conv.conversation.turns()} for tid in question.evidence)
    True

"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from benchmarks.loaders import BenchConversation, BenchQuestion, load_locomo
from benchmarks.suite_cases import SPEAKERS, InjectableCase, fill
from langchain_ripplemem.cli.demo import load_sample
from langchain_ripplemem.schemas import Conversation, Session, Turn

__all__ = ["Haystack", "assign_haystacks", "inject", "locomo_haystacks", "name_conflicts", "sample_haystacks"]

SAMPLE_COPIES = 3
# Gap between the last session of one copy of the sample and the first of the next.
_COPY_GAP = timedelta(days=16)
_NAME = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Haystack:
    """A long dialogue to inject cases into, with its two speakers (most frequent first)."""

    conversation: Conversation
    speakers: tuple[str, str]

    @property
    def id(self) -> str:
        """The dialogue's conversation id."""
        return self.conversation.id


def haystack(conversation: Conversation) -> Haystack:
    """Wrap ``conversation``; its two most frequent speakers fill ``{A}`` and ``{B}``.

    Raises:
        ValueError: if the conversation has fewer than two speakers.

    """
    counts = Counter(turn.speaker for _, turn in conversation.turns() if turn.speaker.strip())
    if len(counts) < 2:
        raise ValueError(f"haystack {conversation.id!r} needs two speakers, has {sorted(counts)}")
    first, second = (name for name, _ in counts.most_common(2))
    return Haystack(conversation, (first, second))


def locomo_haystacks(path: str | Path) -> list[Haystack]:
    """Every conversation of a LoCoMo file as a haystack (questions are not used)."""
    return [haystack(bench.conversation) for bench in load_locomo(path)]


def sample_haystacks(copies: int = SAMPLE_COPIES) -> list[Haystack]:
    """The shipped sample conversation repeated ``copies`` times as one long haystack.

    Copy ``c`` has session ids ``R<c>-S1``..., turn ids ``R<c>-S1:1``... and its
    dates moved after the previous copy's last session, so sessions stay weeks apart.

    Raises:
        ValueError: if ``copies`` is below 1.

    """
    if copies < 1:
        raise ValueError(f"copies must be >= 1, got {copies}")
    sample, _ = load_sample()
    times = [s.time for s in sample.sessions if s.time is not None]
    span = (max(times) - min(times) + _COPY_GAP) if times else timedelta(0)
    sessions = []
    for c in range(copies):
        for session in sample.sessions:
            turns = [turn.model_copy(update={"id": f"R{c + 1}-{turn.id}"}) for turn in session.turns]
            when = session.time + c * span if session.time is not None else None
            sessions.append(Session(id=f"R{c + 1}-{session.id}", time=when, turns=turns))
    return [haystack(Conversation(id=f"sample-x{copies}", sessions=sessions))]


def name_conflicts(case: InjectableCase, hay: Haystack) -> list[str]:
    """Haystack speakers' first names that the case's own text uses (they would change who is who)."""
    words = {w.lower() for text in _texts(case) for w in _NAME.findall(text.replace("{A}", "").replace("{B}", ""))}
    return [name for name in hay.speakers if name.split()[0].lower() in words]


def assign_haystacks(cases: Sequence[InjectableCase], haystacks: Sequence[Haystack]) -> list[Haystack]:
    """A haystack per case: case ``i`` takes haystack ``i mod n``, or the next one without a name conflict.

    Raises:
        ValueError: if a case conflicts with every haystack, or there is none.

    """
    if not haystacks:
        raise ValueError("haystacks is empty: give at least one haystack")
    out = []
    for i, case in enumerate(cases):
        order = [haystacks[(i + j) % len(haystacks)] for j in range(len(haystacks))]
        fit = next((h for h in order if not name_conflicts(case, h)), None)
        if fit is None:
            raise ValueError(f"case {case.id} names a speaker of every haystack: {name_conflicts(case, order[0])}")
        out.append(fit)
    return out


def inject(case: InjectableCase, hay: Haystack, dataset: str = "linked") -> BenchConversation:
    """A copy of ``hay`` with the case's turns inserted, and the case as its one question.

    The question's ``extra`` records the haystack, the start session, the speakers
    and what the case adds (:meth:`~.suite_cases.InjectableCase.injected_extra`; a
    linked case: which evidence turns are bridged, and how many haystack turns
    already contain each bridge cue, since a cue the haystack uses elsewhere is
    harder to follow). ``dataset`` names the suite in the conversation.

    Raises:
        ValueError: if the haystack has too few sessions for the case's offsets.

    """
    rng = random.Random(f"{case.id}|{hay.id}")
    a, b = hay.speakers if rng.random() < 0.5 else hay.speakers[::-1]
    names = dict(zip(SPEAKERS, (a, b), strict=True))
    sessions = hay.conversation.sessions
    turns = [*case.evidence, *case.distractors]
    span = max(turn.session for turn in turns)
    if len(sessions) <= span:
        raise ValueError(f"haystack {hay.id!r} has {len(sessions)} sessions; case {case.id} needs {span + 1}")
    start = rng.randrange(len(sessions) - span)
    inserted: dict[int, list[tuple[int, Turn]]] = {}
    ids: dict[str, str] = {}
    for n, turn in enumerate(turns):
        index = start + turn.session
        session = sessions[index]
        label = turn.key if turn.key is not None else f"x{n - len(case.evidence) + 1}"
        tid = f"{session.id}:{case.id}:{label}"
        if turn.key is not None:
            ids[turn.key] = tid
        gap = rng.randint(1, max(1, len(session.turns) - 1))  # before existing turn ``gap``: between two turns
        new = Turn(id=tid, speaker=names[turn.speaker], text=fill(turn.text, names))
        inserted.setdefault(index, []).append((gap, new))
    new_sessions = [
        session.model_copy(update={"turns": _merged(session.turns, inserted.get(i, []))})
        for i, session in enumerate(sessions)
    ]
    conversation = hay.conversation.model_copy(update={"id": f"{case.id}@{hay.id}", "sessions": new_sessions})
    question = BenchQuestion(
        id=case.id, question=fill(case.question, names), answer=case.gold_answer,
        category=case.category_number, category_name=case.category,
        evidence=[ids[t.key] for t in case.evidence if t.key is not None],
        extra={
            "haystack": hay.id, "start_session": sessions[start].id, "speakers": [a, b],
            **case.injected_extra(ids, hay.conversation),
        },
    )
    return BenchConversation(conversation, [question], dataset=dataset, split=case.split)


def _merged(turns: list[Turn], inserted: list[tuple[int, Turn]]) -> list[Turn]:
    out: list[Turn] = []
    for position, turn in enumerate(turns):
        out.extend(new for gap, new in inserted if gap == position)
        out.append(turn)
    out.extend(new for gap, new in inserted if gap >= len(turns))
    return out


def _texts(case: InjectableCase) -> list[str]:
    return [case.question, *(t.text for t in (*case.evidence, *case.distractors))]
