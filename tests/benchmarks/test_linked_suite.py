"""The linked-evidence suite: its invariants over every case, injection, and the runner end to end."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.cli import bench_main
from benchmarks.haystack import (
    Haystack,
    assign_haystacks,
    haystack,
    inject,
    name_conflicts,
    sample_haystacks,
)
from benchmarks.linked import run_linked
from benchmarks.linked_cases import (
    DOMAINS,
    MIN_CASES,
    MIN_PER_DOMAIN,
    LinkedCase,
    case_problems,
    load_linked_cases,
)
from benchmarks.report import results_markdown
from benchmarks.runner import FreshMemories
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.text.lexical import lexical_tokens
from tests.unit_tests.conftest import BagOfWordsEmbeddings

CASES = load_linked_cases()


def _tokens(text: str) -> set[str]:
    """The BM25 vocabulary of a text, the speaker placeholders left out (every turn has a speaker)."""
    return set(lexical_tokens(text.replace("{A}", " ").replace("{B}", " ")))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_case_is_reachable_only_through_its_bridges(case: LinkedCase):
    asked = _tokens(case.question)
    keys = {turn.key: turn for turn in case.evidence}
    bridged = [turn for turn in case.evidence if turn.bridge is not None]
    assert 2 <= len(case.evidence) <= 3 and bridged
    for turn in case.evidence:
        if turn.bridge is None:  # an anchor: the first hop can find it
            assert asked & _tokens(turn.text), turn.key
            continue
        assert not asked & _tokens(turn.text), (turn.key, asked & _tokens(turn.text))
        cue = turn.bridge.cue.lower()
        source = keys[turn.bridge.source]
        assert source is not turn
        assert cue in turn.text.lower() and cue in source.text.lower(), (turn.key, cue)
        assert cue not in case.question.lower()
    assert len({turn.session for turn in case.evidence}) == len(case.evidence)  # weeks apart
    assert case_problems(case) == []


def test_suite_covers_every_domain_with_a_stratified_heldout_split():
    assert len(CASES) >= MIN_CASES
    per_domain = Counter(case.domain for case in CASES)
    assert set(per_domain) == set(DOMAINS) and min(per_domain.values()) >= MIN_PER_DOMAIN
    for domain, n in per_domain.items():
        heldout = sum(c.split == "heldout" for c in CASES if c.domain == domain)
        assert n // 3 <= heldout <= -(-n // 3), domain
    assert len({case.id for case in CASES}) == len(CASES)
    assert len(load_linked_cases(split="tune")) + len(load_linked_cases(split="heldout")) == len(CASES)
    kinds = Counter(t.bridge.kind for c in CASES for t in c.evidence if t.bridge is not None)
    assert len(kinds) >= 6  # people, places, organisations, named things and topics
    assert sum(_two_hops(c) for c in CASES) >= 8
    assert all(c.distractors for c in CASES)


def _two_hops(case: LinkedCase) -> bool:
    return any(t.bridge is not None and case.turn(t.bridge.source).bridge is not None for t in case.evidence)


def _case(**changes) -> LinkedCase:
    base = {
        "id": "test-01", "domain": "money", "split": "tune", "question": "Why did {A} sell the boat?",
        "evidence": [
            {"key": "sold", "session": 3, "speaker": "{A}", "text": "Sold the boat to Harriet."},
            {"key": "move", "session": 0, "speaker": "{A}", "text": "Harriet moved to the coast in June.",
             "bridge": {"from": "sold", "cue": "Harriet", "kind": "person"}},
        ],
    }
    base.update(changes)
    return LinkedCase.model_validate(base)


def test_case_problems_names_each_broken_rule():
    assert case_problems(_case()) == []
    leaky = _case(question="Why did {A} sell the boat to Harriet on the coast?")
    assert any("shares" in p for p in case_problems(leaky))
    assert any("is in the question" in p for p in case_problems(leaky))
    lost = _case(evidence=[
        {"key": "sold", "session": 3, "speaker": "{A}", "text": "Sold the boat last week."},
        {"key": "move", "session": 0, "speaker": "{A}", "text": "Harriet moved to the coast in June.",
         "bridge": {"from": "sold", "cue": "Harriet", "kind": "person"}}])
    assert any("is not in turn 'sold'" in p for p in case_problems(lost))
    silent = _case(evidence=[
        {"key": "sold", "session": 3, "speaker": "{A}", "text": "Harriet says hello."},
        {"key": "move", "session": 0, "speaker": "{A}", "text": "Harriet moved to the coast in June.",
         "bridge": {"from": "sold", "cue": "Harriet", "kind": "person"}}])
    assert any("anchor shares no token" in p for p in case_problems(silent))
    circular = _case(evidence=[
        {"key": "x", "session": 1, "speaker": "{A}", "text": "Harriet loves the coast.",
         "bridge": {"from": "y", "cue": "Harriet", "kind": "person"}},
        {"key": "y", "session": 2, "speaker": "{B}", "text": "Harriet moved to the coast.",
         "bridge": {"from": "x", "cue": "Harriet", "kind": "person"}}])
    problems = case_problems(circular)
    assert any("never reach an anchor" in p for p in problems)
    same_session = _case(evidence=[
        {"key": "sold", "session": 0, "speaker": "{A}", "text": "Sold the boat to Harriet."},
        {"key": "move", "session": 0, "speaker": "{A}", "text": "Harriet moved to the coast in June.",
         "bridge": {"from": "sold", "cue": "Harriet", "kind": "person"}}])
    assert any("share a session" in p for p in case_problems(same_session))


def test_schema_rejects_dangling_bridges_and_bad_fields():
    with pytest.raises(ValueError, match="unknown key 'nope'"):
        _case(evidence=[
            {"key": "sold", "session": 3, "speaker": "{A}", "text": "Sold the boat to Harriet."},
            {"key": "move", "session": 0, "speaker": "{A}", "text": "Harriet moved.",
             "bridge": {"from": "nope", "cue": "Harriet", "kind": "person"}}])
    with pytest.raises(ValueError, match="domain"):
        _case(domain="sports")
    with pytest.raises(ValueError, match="speaker"):
        _case(evidence=[{"key": "a", "session": 0, "speaker": "{C}", "text": "x"},
                        {"key": "b", "session": 1, "speaker": "{A}", "text": "y"}])


def test_load_refuses_a_file_that_breaks_the_rules(tmp_path):
    broken = _case(question="Why did {A} sell the boat to Harriet?").model_dump(by_alias=True)
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"cases": [broken]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"suite\.json breaks the suite's rules: .*shares"):
        load_linked_cases(path)
    assert load_linked_cases(path, check=False)[0].id == "test-01"
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"cases": [_case().model_dump(by_alias=True)]}), encoding="utf-8")
    assert [c.id for c in load_linked_cases(good)] == ["test-01"]  # a custom suite need not be 40 cases
    with pytest.raises(ValueError, match="split must be one of"):
        load_linked_cases(split="train")
    with pytest.raises(ValueError, match="cannot read the linked suite"):
        load_linked_cases(tmp_path / "missing.json")


def test_sample_haystack_is_long_with_sessions_weeks_apart():
    (hay,) = sample_haystacks()
    sessions = hay.conversation.sessions
    assert hay.speakers == ("Maya", "Sam") and len(sessions) == 21
    times = [s.time for s in sessions]
    assert times == sorted(times) and len(set(times)) == len(times)
    ids = [t.id for _, t in hay.conversation.turns()]
    assert len(ids) == len(set(ids)) > 250
    with pytest.raises(ValueError, match="copies must be >= 1"):
        sample_haystacks(0)


def test_inject_puts_each_turn_between_turns_of_its_session():
    (hay,) = sample_haystacks()
    case = CASES[0]
    bench = inject(case, hay)
    assert inject(case, hay).conversation == bench.conversation  # reproducible
    original = {s.id: [t.id for t in s.turns] for s in hay.conversation.sessions}
    question = bench.questions[0]
    speakers = set(question.extra["speakers"])
    assert speakers == {"Maya", "Sam"} and "{" not in question.question
    start = [s.id for s in hay.conversation.sessions].index(question.extra["start_session"])
    by_id = {t.id: (i, s) for i, s in enumerate(bench.conversation.sessions) for t in s.turns}
    for turn, tid in zip(case.evidence, question.evidence, strict=True):
        index, session = by_id[tid]
        assert index == start + turn.session
        position = [t.id for t in session.turns].index(tid)
        assert 0 < position < len(session.turns) - 1 or len(original[session.id]) < 2
        injected = session.turns[position]
        assert injected.speaker in speakers and "{" not in injected.text
        kept = [t.id for t in session.turns if f":{case.id}:" not in t.id]
        assert kept == original[session.id]  # the haystack's own turns, in order
    assert len(question.evidence) == len(case.evidence)
    assert set(question.extra["bridged"]) < set(question.evidence)
    n_injected = sum(f":{case.id}:" in t.id for _, t in bench.conversation.turns())
    assert n_injected == len(case.evidence) + len(case.distractors)
    assert len(hay.conversation.turns()) + n_injected == len(bench.conversation.turns())


def test_a_case_never_lands_in_a_haystack_whose_speaker_it_names():
    (sample,) = sample_haystacks()
    other = haystack(Conversation.model_validate({"id": "other", "sessions": [
        {"id": f"S{i}", "turns": [{"id": f"S{i}:{j}", "speaker": "Ana" if j % 2 else "Bo", "text": "hi"}
                                  for j in range(3)]} for i in range(12)]}))
    naming = _case(evidence=[
        {"key": "sold", "session": 3, "speaker": "{A}", "text": "Sold the boat to Harriet and Maya."},
        {"key": "move", "session": 0, "speaker": "{A}", "text": "Harriet moved to the coast in June.",
         "bridge": {"from": "sold", "cue": "Harriet", "kind": "person"}}])
    assert name_conflicts(naming, sample) == ["Maya"]
    assert assign_haystacks([naming, naming], [sample, other]) == [other, other]
    with pytest.raises(ValueError, match="names a speaker of every haystack"):
        assign_haystacks([naming], [sample])
    tiny = Haystack(other.conversation.model_copy(update={"sessions": other.conversation.sessions[:2]}),
                    other.speakers)
    with pytest.raises(ValueError, match="needs 4"):
        inject(_case(), tiny)


def test_every_shipped_case_fits_the_fallback_haystack():
    (hay,) = sample_haystacks()
    assert all(not name_conflicts(case, hay) for case in CASES)
    for case in CASES:
        assert len(inject(case, hay).questions[0].evidence) == len(case.evidence)


def test_run_linked_end_to_end_on_the_fallback_haystack():
    cases = [next(c for c in CASES if c.split == split) for split in ("tune", "heldout")]
    factory = FreshMemories("linked", embeddings=CachedEmbeddings(BagOfWordsEmbeddings()))
    res = run_linked(cases, sample_haystacks(), ks=[5, 10], memory_factory=factory, progress=False)
    assert res["dataset"] == "linked" and res["k"] == [5, 10] and res["n_questions"] == 2
    assert list(res["systems"]) == ["ripplemem", "no_expansion", "no_structural", "no_planning",
                                   "dense", "bm25", "hybrid_rrf"]
    assert res["splits"] == {"tune": [f"{cases[0].id}@sample-x3"], "heldout": [f"{cases[1].id}@sample-x3"]}
    assert res["config"]["recall"] == RecallConfig().model_dump(mode="json")  # the recommended settings
    for name, entry in res["systems"].items():
        assert list(entry["by_category"]) == [*DOMAINS, "overall"], name
        overall = entry["by_category"]["overall"]
        assert overall["n"] == 2 and 0.0 <= overall["recall_all@5"] <= overall["recall_all@10"] <= 1.0
        assert overall["recall_all@10"] <= overall["recall_frac@10"]
        assert set(entry["splits"]) == {"tune", "heldout"}
        assert entry["query_ms_p50"] > 0
    # Every anchor shares words with its question, so BM25 ranks it in the top 10.
    for record, case in zip(res["questions"]["bm25"], cases, strict=True):
        ranks = record["_evidence_ranks"]
        anchors = [tid for tid in ranks if tid not in res["cases"][cases.index(case)]["bridged"]]
        assert anchors and all(ranks[tid] is not None and ranks[tid] <= 10 for tid in anchors)
    assert [row["id"] for row in res["cases"]] == [c.id for c in cases]
    markdown = results_markdown(res)
    assert "### Evidence ranks per case" in markdown and cases[1].id in markdown
    bm25_row = next(line for line in markdown.splitlines() if line.startswith("| bm25 | 100.0 |"))
    assert bm25_row.split(" | ")[3] == "100.0"  # anchors@10: BM25 finds every anchor
    assert "| overall (n=2) |" in markdown


def test_cli_linked_writes_results_and_tables(tmp_path, monkeypatch):
    from benchmarks import cached_embeddings

    class Named(BagOfWordsEmbeddings):
        model_id = "bag-of-words"

    monkeypatch.setattr(cached_embeddings, "CachedEmbeddings",
                        lambda base=None, directory=None: CachedEmbeddings(Named(), directory))
    out, md, cache = tmp_path / "linked.json", tmp_path / "linked.md", tmp_path / "vectors"
    code = bench_main(["linked", "--split", "heldout", "--limit", "1", "--systems", "ripplemem,bm25",
                       "--k", "5,10", "--out", str(out), "--md", str(md), "--no-progress",
                       "--embedding-cache", str(cache)])
    assert code == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["suite"]["split"] == "heldout" and res["suite"]["n_cases"] == 1
    assert res["cases"][0]["split"] == "heldout" and list(res["systems"]) == ["ripplemem", "bm25"]
    assert "recall_all@10" in md.read_text(encoding="utf-8") and any(cache.rglob("shard-*.npz"))
    assert bench_main(["linked", "--limit", "0", "--out", str(out)]) == 2
    assert bench_main(["linked", "--systems", "nope"]) == 2


def test_cached_embeddings_embed_each_text_once_and_persist(tmp_path):
    class Counting(BagOfWordsEmbeddings):
        model_id = "counting"

        def __init__(self):
            self.seen: list[str] = []

        def embed_documents(self, texts):
            self.seen += texts
            return super().embed_documents(texts)

    base = Counting()
    cache = CachedEmbeddings(base, tmp_path / "c")
    first = cache.embed_documents(["boat", "coast", "boat"])
    assert base.seen == ["boat", "coast"] and first[0] == first[2]
    assert cache.embed_documents(["coast"]) == [first[1]] and base.seen == ["boat", "coast"]
    assert cache.embed_query("boat") == base.embed_query("boat") and cache.model_id == "counting"
    assert cache.save().parent == cache.folder and cache.save() is None  # nothing new the second time
    again = CachedEmbeddings(Counting(), tmp_path / "c")
    assert again.embed_documents(["coast", "boat"]) == [first[1], first[0]] and again.base.seen == []


def test_each_memory_is_warmed_up_before_its_timed_question():
    from benchmarks.linked import WARMUP_QUERY
    from tests.benchmarks.fixtures.bench_fakes import FakeMemory

    made: list[FakeMemory] = []

    def factory():
        made.append(FakeMemory())
        return made[-1]

    res = run_linked(CASES[:2], sample_haystacks(), systems=["ripplemem"], ks=[5], memory_factory=factory,
                     progress=False)
    assert [[c["query"] for c in m.recall_calls] for m in made] == [
        [WARMUP_QUERY, res["cases"][0]["question"]], [WARMUP_QUERY, res["cases"][1]["question"]]]
    assert res["warmup_query"] == WARMUP_QUERY and res["n_questions"] == 2
    assert len(res["questions"]["ripplemem"]) == 2  # the warm-up is neither timed nor scored


def test_a_bridge_through_a_name_said_only_at_sentence_starts():
    # "Rafa" starts every turn that says it, so the extractor never takes it for a name; the
    # namespace does (index.is_name), and the landlord's turn, which shares no word with the
    # question, is bridged to from the trip's.
    from langchain_ripplemem.memory import RippleMem

    case = LinkedCase.model_validate({
        "id": "travel-99", "domain": "travel", "split": "tune",
        "question": "Why did {A} cut the Lisbon trip short?",
        "evidence": [
            {"key": "home", "session": 5, "speaker": "{A}",
             "text": "Cut the Lisbon trip short and flew home Tuesday. Rafa's couch stopped being an option."},
            {"key": "landlord", "session": 6, "speaker": "{B}",
             "text": "Rafa texted me in a panic, his landlord found out about the guests and threatened to evict him.",
             "bridge": {"from": "home", "cue": "Rafa", "kind": "person"}}],
        "distractors": [{"session": 2, "speaker": "{B}", "text": "Rafa from the climbing wall says hi."}]})
    bench = inject(case, sample_haystacks()[0])
    question = bench.questions[0]
    with RippleMem(BagOfWordsEmbeddings()) as memory:
        memory.add_conversation(bench.conversation, namespace=("t",))
        found = {t for u in memory.recall(question.question, namespace=("t",), k=10).units for t in u.source.turn_ids}
    assert set(question.evidence) <= found


def test_the_development_set_keeps_the_suite_rules_and_shares_no_case_or_story():
    from benchmarks.linked_cases import DEV_SUITE

    dev = load_linked_cases(DEV_SUITE)
    assert len(dev) >= 56 and {c.domain for c in dev} == set(DOMAINS)
    assert {c.split for c in dev} == {"tune"}  # every dev case has been looked at
    assert not {c.id for c in dev} & {c.id for c in CASES}
    shipped = {t.text for c in CASES for t in c.evidence}
    assert not {t.text for c in dev for t in c.evidence} & shipped
