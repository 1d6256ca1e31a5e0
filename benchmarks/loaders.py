"""Benchmark loaders: LoCoMo and LongMemEval-S files -> conversations + scored questions.

Conversations come from the converters in :mod:`benchmarks.record_formats`;
an ``adapter=`` argument replaces them, e.g. in tests. Evidence is normalised against the turn ids of
the converted conversation, so a question's ``evidence`` always names turns a
unit can point at; whatever cannot be resolved is kept in ``unresolved``.

Example:
    >>> import json, pathlib, tempfile
    >>> record = {"sample_id": "conv-x", "conversation": {
    ...     "speaker_a": "Maya", "speaker_b": "Sam", "session_1_date_time": "10:00 am on 3 March, 2023",
    ...     "session_1": [{"speaker": "Maya", "dia_id": "D1:1", "text": "I took a pottery class in Lisbon."},
    ...                   {"speaker": "Sam", "dia_id": "D1:2", "text": "Nice, I ran 10 km on Sunday."}]},
    ...     "qa": [{"question": "Where did Maya take a pottery class?", "answer": "Lisbon",
    ...             "evidence": ["D1:1"], "category": 4}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "locomo.json"
    >>> _ = path.write_text(json.dumps([record]))
    >>> convs = load_locomo(path, limit=1)
    >>> convs[0].questions[0].category_name, convs[0].questions[0].evidence
    ('single-hop', ['D1:1'])

"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.metrics import normalise_evidence
from benchmarks.record_formats import conversation_from_locomo, conversation_from_longmemeval
from langchain_ripplemem.schemas import Conversation

Adapter = Callable[[dict[str, Any]], Conversation]

LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
# The paper tunes nothing on LoCoMo, but we do: the first seven conversations
# are for tuning, the last three are held out so reported gains can be checked
# on data no setting was chosen on.
LOCOMO_TUNE = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47")
LOCOMO_HELDOUT = ("conv-48", "conv-49", "conv-50")

LONGMEMEVAL_TYPES: tuple[str, ...] = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)


@dataclass(frozen=True)
class BenchQuestion:
    """One benchmark question with its gold evidence.

    Attributes:
        id: unique within the dataset (LoCoMo: ``"<sample_id>:q<index>"``;
            LongMemEval: the ``question_id``).
        question: the question text.
        answer: the gold answer (``None`` for LoCoMo adversarial questions).
        category: LoCoMo category 1-5; LongMemEval: 1-based index in
            :data:`LONGMEMEVAL_TYPES` (0 for an unknown type).
        category_name: ``"multi-hop"``, ... or the LongMemEval ``question_type``.
        evidence: canonical turn ids present in the conversation.
        unresolved: raw evidence pieces that name no turn of the conversation.
        evidence_sessions: session ids holding the evidence (LongMemEval).
        answerable: False for LoCoMo adversarial and LongMemEval abstention.
        question_date: when the question is asked, if the dataset says.
        asker: the speaker who asks, if the dataset says (LongMemEval: ``"user"``):
            the question's "I" and "my" are that speaker (``RippleMem.recall(asker=...)``).
        extra: dataset fields kept for reference (e.g. ``adversarial_answer``).
        outranks: turn ids the evidence must rank above to count as found (the update suite: a
            statement the question's answer replaced, or replaced in turn); empty for other datasets.

    """

    id: str
    question: str
    answer: str | None
    category: int
    category_name: str
    evidence: list[str]
    unresolved: list[str] = field(default_factory=list)
    evidence_sessions: list[str] = field(default_factory=list)
    answerable: bool = True
    question_date: str | None = None
    asker: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    outranks: list[str] = field(default_factory=list)


@dataclass
class BenchConversation:
    """A conversation to ingest and the questions asked about it."""

    conversation: Conversation
    questions: list[BenchQuestion]
    dataset: str
    split: str | None = None

    @property
    def id(self) -> str:
        """The conversation id (also the benchmark namespace label)."""
        return self.conversation.id


def load_locomo(
    path: str | Path, limit: int | None = None, *, adapter: Adapter | None = None
) -> list[BenchConversation]:
    """Load LoCoMo (``locomo10.json``): one :class:`BenchConversation` per sample.

    Args:
        path: the LoCoMo JSON file (a list of samples).
        limit: keep only the first ``limit`` conversations.
        adapter: record -> Conversation; defaults to
            ``benchmarks.record_formats.conversation_from_locomo``.

    Raises:
        ValueError: if the file is not a LoCoMo list of samples.

    """
    records = _read_list(path, "LoCoMo")
    convert = adapter if adapter is not None else conversation_from_locomo
    out: list[BenchConversation] = []
    for index, record in enumerate(_limited(records, limit)):
        if not isinstance(record, dict) or "qa" not in record or "conversation" not in record:
            raise ValueError(
                f"{path}: sample {index} is not a LoCoMo sample (needs 'qa' and 'conversation')"
            )
        conv = convert(record)
        known = _turn_ids(conv)
        sample_id = str(record.get("sample_id") or conv.id)
        questions = [
            _locomo_question(sample_id, i, qa, known, path) for i, qa in enumerate(record["qa"])
        ]
        out.append(
            BenchConversation(conv, questions, dataset="locomo", split=locomo_split(conv.id))
        )
    return out


def locomo_split(conversation_id: str) -> str | None:
    """``"tune"``, ``"heldout"`` or ``None`` (not one of the ten LoCoMo conversations)."""
    if conversation_id in LOCOMO_TUNE:
        return "tune"
    if conversation_id in LOCOMO_HELDOUT:
        return "heldout"
    return None


def _locomo_question(
    sample_id: str, index: int, qa: dict[str, Any], known: set[str], path: str | Path
) -> BenchQuestion:
    try:
        category = int(qa["category"])
        text = str(qa["question"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{path}: {sample_id} question {index} needs 'question' and an int 'category'"
        ) from exc
    if category not in LOCOMO_CATEGORIES:
        raise ValueError(f"{path}: {sample_id} question {index} has unknown category {category}")
    evidence, unresolved = normalise_evidence(qa.get("evidence"), known)
    answerable = category != 5
    # Two adversarial questions carry an "answer" too; category 5 stays
    # unanswerable by definition, the field is kept in ``extra``.
    answer = qa.get("answer") if answerable else None
    extra = {k: v for k, v in qa.items() if k not in {"question", "category", "evidence"}}
    return BenchQuestion(
        id=f"{sample_id}:q{index}",
        question=text,
        answer=None if answer is None else str(answer),
        category=category,
        category_name=LOCOMO_CATEGORIES[category],
        evidence=evidence,
        unresolved=unresolved,
        answerable=answerable,
        extra=extra,
    )


def load_longmemeval(
    path: str | Path, limit: int | None = None, *, adapter: Adapter | None = None, per_type: int | None = None
) -> list[BenchConversation]:
    """Load LongMemEval-S: every record is its own haystack conversation with one question.

    Turn evidence = turns with ``has_answer: true`` (none for abstention
    questions, whose id ends in ``"_abs"``: they are scored at session level
    and by the answer judge only). Session evidence = ``answer_session_ids``.

    Args:
        path: the LongMemEval JSON file (a list of records).
        limit: keep only the first ``limit`` records.
        adapter: record -> Conversation; defaults to
            ``benchmarks.record_formats.conversation_from_longmemeval``.
        per_type: keep only the first ``per_type`` answerable records of each question type, in file
            order (abstention records left out): a sample of every type (the files are sorted by type,
            so ``limit`` alone takes one type). Applied before ``limit``.

    Raises:
        ValueError: if a record misses a LongMemEval field, or ``per_type`` is below 1.

    """
    records = _read_list(path, "LongMemEval")
    if per_type is not None:
        records = _first_of_each_type(records, per_type)
    convert = adapter if adapter is not None else conversation_from_longmemeval
    out: list[BenchConversation] = []
    for index, record in enumerate(_limited(records, limit)):
        missing = [
            key
            for key in ("question_id", "question", "haystack_sessions", "haystack_session_ids")
            if not isinstance(record, dict) or key not in record
        ]
        if missing:
            raise ValueError(f"{path}: record {index} is not LongMemEval (missing {missing})")
        conv = convert(record)
        out.append(
            BenchConversation(conv, [_longmemeval_question(record, conv)], dataset="longmemeval")
        )
    return out


def _first_of_each_type(records: list[Any], n: int) -> list[Any]:
    """The first ``n`` answerable records of each ``question_type``, in file order."""
    if n < 1:
        raise ValueError(f"per_type must be >= 1, got {n}")
    taken: dict[Any, int] = {}
    out = []
    for record in records:
        if not isinstance(record, dict) or str(record.get("question_id", "")).endswith("_abs"):
            continue
        kind = record.get("question_type")
        if taken.get(kind, 0) < n:
            taken[kind] = taken.get(kind, 0) + 1
            out.append(record)
    return out


#: LongMemEval's questions are the user's, asked in the first person ("How often do I see Dr. Smith?").
LONGMEMEVAL_ASKER = "user"


def _longmemeval_question(record: dict[str, Any], conv: Conversation) -> BenchQuestion:
    qid = str(record["question_id"])
    qtype = str(record.get("question_type", "unknown"))
    abstention = qid.endswith("_abs")
    if len(record["haystack_session_ids"]) != len(record["haystack_sessions"]):
        raise ValueError(
            f"LongMemEval record {qid}: {len(record['haystack_session_ids'])} session ids "
            f"but {len(record['haystack_sessions'])} sessions"
        )
    session_map = _session_map(record["haystack_session_ids"], conv)
    raw_turns: list[str] = []
    if not abstention:
        for raw_sid, turns in zip(
            record["haystack_session_ids"], record["haystack_sessions"], strict=True
        ):
            for i, turn in enumerate(turns):
                if isinstance(turn, dict) and turn.get("has_answer"):
                    raw_turns.append(
                        _longmemeval_turn_id(conv, session_map, str(raw_sid), i, len(turns))
                    )
    evidence, unresolved = normalise_evidence(raw_turns, _turn_ids(conv))
    sessions = [session_map.get(str(s), str(s)) for s in record.get("answer_session_ids", [])]
    known_sessions = {s.id for s in conv.sessions}
    unresolved += [f"session:{s}" for s in sessions if s not in known_sessions]
    return BenchQuestion(
        id=qid,
        question=str(record["question"]),
        answer=None if record.get("answer") is None else str(record["answer"]),
        category=LONGMEMEVAL_TYPES.index(qtype) + 1 if qtype in LONGMEMEVAL_TYPES else 0,
        category_name=qtype,
        evidence=evidence,
        unresolved=unresolved,
        evidence_sessions=[s for s in sessions if s in known_sessions],
        answerable=not abstention,
        question_date=record.get("question_date"),
        asker=LONGMEMEVAL_ASKER,
    )


def _session_map(raw_ids: list[Any], conv: Conversation) -> dict[str, str]:
    """Raw haystack session id -> id of the converted session.

    The adapter keeps sessions in file order, each id once (a repeat with the
    same turns is dropped); when the counts agree we map by position, which
    stays right even if the adapter renames sessions.
    """
    distinct = list(dict.fromkeys(str(raw) for raw in raw_ids))
    if len(distinct) == len(conv.sessions):
        return {raw: session.id for raw, session in zip(distinct, conv.sessions, strict=True)}
    return {raw: raw for raw in distinct}


def _longmemeval_turn_id(
    conv: Conversation, session_map: dict[str, str], raw_sid: str, index: int, n_raw: int
) -> str:
    """Turn id of the ``index``-th (0-based) raw turn of a haystack session.

    The agreed id format is ``f"{session_id}:{i}"``; if the converted
    conversation has no such turn but kept one turn per raw turn, the turn at
    the same position is used (robust to another numbering). Otherwise the
    agreed id is returned and ends up unresolved.
    """
    sid = session_map.get(raw_sid, raw_sid)
    agreed = f"{sid}:{index}"
    for session in conv.sessions:
        if session.id != sid:
            continue
        if any(turn.id == agreed for turn in session.turns):
            return agreed
        if len(session.turns) == n_raw:
            return session.turns[index].id
    return agreed


def _turn_ids(conv: Conversation) -> set[str]:
    return {turn.id for _, turn in conv.turns()}


def read_json(path: str | Path, name: str) -> Any:
    """Parse a JSON file; a missing file or bad JSON is a ValueError naming the file."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"{name} file not found: {file}")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file} is not valid JSON: {exc}") from exc


def _read_list(path: str | Path, name: str) -> list[Any]:
    file = Path(path)
    data = read_json(file, name)
    if not isinstance(data, list):
        raise ValueError(f"{file}: expected a JSON list of {name} records, got {type(data).__name__}")
    return data


def _limited(records: list[Any], limit: int | None) -> list[Any]:
    if limit is None:
        return records
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    return records[:limit]
