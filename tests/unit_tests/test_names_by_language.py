"""A capitalised word is a name by the rules of its language (issue 52: cookbook 06's "das Wetter").

German capitalises every noun: after an article, a possessive, a quantifier or a
number a capitalised word is a noun ("das Wetter", "Mein Bruder", "drei Kühe"), and
a name is the word without one ("Mein Bruder Jürgen": Jürgen). Other languages, and
the same words in English ("I am Sam"), keep their names.
"""

from __future__ import annotations

import pytest

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.write.extraction.extractor import Window
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

GERMAN = [
    ("Zoë", "Mein Bruder Jürgen ist letzten Frühling nach München gezogen."),
    ("Lukas", "Mein Bruder wohnt immer noch in Hamburg bei unseren Eltern."),
    ("Zoë", "Jürgen hat jetzt drei Kühe auf einer Alm im Allgäu."),
    ("Lukas", "Das Wetter soll morgen wieder schlechter werden."),
    ("Zoë", "Ich fahre mit Anna ins Kino, die Karten hat Jürgen."),
]


def conversation(turns: list[tuple[str, str]]) -> Conversation:
    return Conversation.model_validate({"id": "c", "sessions": [{"id": "S1", "time": "2026-05-04T18:00:00Z", "turns": [
        {"id": f"S1:{i}", "speaker": speaker, "text": text} for i, (speaker, text) in enumerate(turns)]}]})


def participants(turns: list[tuple[str, str]]) -> list[list[str]]:
    conv = conversation(turns)
    window = Window(conversation_id=conv.id, index=0, items=tuple(conv.turns()))
    return [unit.participants for unit in RuleBasedExtractor().extract(window, ("n",)).units]


def test_german_nouns_after_a_determiner_are_no_names() -> None:
    found = participants(GERMAN)
    assert found[1] == ["Lukas"] and found[3] == ["Lukas"]  # "Mein Bruder", "Eltern", "Das Wetter": nouns
    assert "Jürgen" in found[0] and not {"Mein Bruder Jürgen", "Frühling"} & set(found[0])
    assert found[2] == ["Zoë", "Jürgen"]  # not "Kühe" (after "drei") nor "Alm" (after "einer")
    assert found[4] == ["Zoë", "Anna", "Jürgen"]  # "mit Anna": a name after a preposition; "die Karten" a noun


@pytest.mark.parametrize(("text", "names"), [
    ("I am Sam, and Den said Alle was coming with Ina.", ["Sam", "Den", "Alle", "Ina"]),  # English
    ("Je suis allé au marché avec Marie et Paul.", ["Marie", "Paul"]),  # French
    ("Ayer mi hermano Carlos cenó con Lucía.", ["Carlos", "Lucía"]),  # Spanish
    ("Gisteren heeft mijn broer Pieter met Sanne gegeten.", ["Pieter", "Sanne"]),  # Dutch
])
def test_other_languages_keep_their_names(text: str, names: list[str]) -> None:
    (found,) = participants([("Maya", text)])
    assert found == ["Maya", *names]


def test_a_german_question_about_the_weather_names_only_its_person(bow) -> None:
    memory = RippleMem(bow)
    memory.add_conversation(conversation(GERMAN), namespace="de")
    cues = memory.recall("Was hat Zoë über das Wetter gesagt?", namespace="de").cues
    assert cues is not None and cues.participants == ["zoë"]
