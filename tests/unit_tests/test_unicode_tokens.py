"""Words of every script in the lexical and cue views; English tokenised exactly as before (issue 36.2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_ripplemem.cache_bounds import clear_text_caches
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall.query_cues import move_speakers
from langchain_ripplemem.schemas import Conversation, QueryCues
from langchain_ripplemem.text.language import detect_language, stem_as
from langchain_ripplemem.text.lexical import content_words, lexical_tokens, words

HERE = Path(__file__).parent
ENGLISH = HERE / "fixtures" / "english_tokens.json"


def test_letters_with_diacritics_stay_in_their_words():
    assert content_words("Zoë moved to München last spring") == ["zoë", "moved", "münchen", "last", "spring"]
    assert "münchen" in lexical_tokens("München")
    assert "kölsch" in lexical_tokens("Ein Kölsch, bitte")
    assert words("Zoë") == ["zoë"]
    assert content_words("The Thai place on Rue Mercière") == ["thai", "place", "rue", "mercière"]


@pytest.mark.parametrize("query", ["איפה גרה נועה?", "张伟住在哪里？", "ミュンヘンに引っ越しました"])
def test_queries_in_other_scripts_have_keywords(query):
    assert content_words(query)
    assert lexical_tokens(query)


def test_han_is_cut_into_bigrams_and_kana_into_runs():
    assert lexical_tokens("张伟住在上海") == ["张伟", "伟住", "住在", "在上", "上海"]
    assert "ミュンヘン" in lexical_tokens("ミュンヘンに住んでいます")


def test_nfkc_folds_full_width_letters_and_ligatures():
    assert words("Ｍｕｎｉｃｈ ﬁsh") == ["munich", "fish"]
    assert lexical_tokens("ＭÜＮＣＨＥＮ")[0] == "münchen"


def test_german_text_is_stemmed_as_german():
    from langchain_ripplemem.text.language import detect_language

    text = "Jürgen hat drei Kühe auf der Alm, und die Kühe geben viel Milch."
    assert detect_language(text) == "german"
    tokens = lexical_tokens(text)
    assert "kuh" in tokens and "kühe" in tokens  # the German stem beside the surface form
    assert "der" not in tokens and "und" not in tokens  # German stopwords
    assert set(lexical_tokens("Wie viele Kühen?")) & set(tokens) >= {"kuh"}


def test_french_elision_and_curly_apostrophes():
    assert content_words("l’été à Lyon, c’est génial")[:2] == ["été", "lyon"]
    assert content_words("I don’t like Zoë’s café") == ["zoë", "café"]  # English: stopword, possessive


def test_pure_ascii_english_is_tokenised_as_before():
    """A committed sample's tokens, as the ASCII-only tokeniser gave them, pin English."""
    sample = json.loads(ENGLISH.read_text(encoding="utf-8"))
    assert len(sample) >= 20
    for text, expected in sample.items():
        assert text.isascii()
        assert lexical_tokens(text) == expected, text


def _german_chat() -> Conversation:
    turns = [
        ("Zoë", "Hallo! Wie war dein Wochenende?"),
        ("Lukas", "Ganz gut, wir waren wandern und danach im Kino."),
        ("Zoë", "Jürgen hat jetzt drei Kühe auf seiner Alm im Allgäu."),
        ("Lukas", "Der Film war ein bisschen zu lang, aber die Musik war toll."),
        ("Zoë", "Am Montag fange ich wieder mit dem Sport an."),
        ("Lukas", "Meine Schwester hat eine neue Wohnung in der Stadt gefunden."),
        ("Zoë", "Das Wetter soll morgen wieder schlechter werden."),
    ]
    return Conversation.model_validate({"id": "de", "sessions": [{"id": "S1", "time": "2026-03-02T19:00:00+00:00",
        "turns": [{"id": f"S1:{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns, 1)]}]})


def test_a_german_word_with_diacritics_recalls_its_memory(bow):
    memory = RippleMem(bow)
    memory.add_conversation(_german_chat(), namespace=("de",))
    hits = memory.search("Wie viele Kühen?", namespace=("de",), k=1, view="lexical")
    assert hits and "Kühe" in hits[0][0].restatement
    result = memory.recall("Wie viele Kühen hat Jürgen?", namespace=("de",), k=1)
    assert "Kühe" in result.memories[0].unit.restatement


def test_the_cue_view_sees_a_name_with_a_diacritic(bow):
    memory = RippleMem(bow)
    memory.add_conversation(_german_chat(), namespace=("de",))
    result = memory.recall("Was hat Zoë über das Wetter gesagt?", namespace=("de",))
    assert result.cues is not None and "zoë" in result.cues.participants
    assert "Zoë" not in result.cues.query  # a speaker's name leaves the text the other views match


def test_clearing_the_text_caches_empties_the_language_caches_too():
    lexical_tokens("Jürgen hat jetzt drei Kühe auf einer Alm im Allgäu.")
    assert detect_language.cache_info().currsize and stem_as.cache_info().currsize
    clear_text_caches()
    assert detect_language.cache_info().currsize == 0 and stem_as.cache_info().currsize == 0


def test_a_speakers_name_in_a_script_without_spaces_leaves_the_query():
    cues = QueryCues(query="李娜最近在学做什么？", keywords=[], participants=["李娜"])
    assert move_speakers(cues, frozenset({"李娜", "老周"})).query == "最近在学做什么？"
    latin = QueryCues(query="Was macht Zoë's Bruder?", keywords=[], participants=["zoë"])
    assert move_speakers(latin, frozenset({"zoë"})).query == "Was macht Bruder?"
