"""Which statements supersede which (issue 52): the fact frames, change statements, and the order they go by.
Offline, with the bag-of-words encoder."""

from __future__ import annotations

import pytest

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.write.supersession.changes import is_change, names_changed
from langchain_ripplemem.write.supersession.frames import Fact, facts

from .conftest import make_unit
from .test_supersession import talk

MAYA = ("maya",)


@pytest.mark.parametrize(("text", "expected"), [
    ("Maya: I rent a tiny flat in Ghent, right by the canal.", [("residence", "ghent")]),
    ("Maya: We moved into a house in Antwerp at the start of the month.", [("residence", "antwerp")]),
    ("Maya: Our apartment in Porto has a view of the river.", [("residence", "porto")]),
    ("Maya: My job is at the city library.", [("employer", "city library")]),
    ("Maya: I got hired by Northwind Labs.", [("employer", "northwind labs")]),
    ("Maya: My boyfriend Felix is coming too.", [("partner", "felix")]),
    ("Maya: I've started seeing someone called Ravi.", [("partner", "ravi")]),
    ("Maya: My partner is great at cooking.", []),  # a partner is named, not described
    ("Maya: Pho is my favourite dish.", [("favourite:dish", "pho")]),
    ("Maya: My favourite spot in town is the rooftop café.", [("favourite:place", "rooftop café")]),
    ("Maya: I've gone fully vegan.", [("diet", "vegan")]),
    ("Maya: My doctor put me on a low-sodium diet.", [("diet", "low-sodium")]),
    ("Maya: I drive an old Volvo estate.", [("vehicle", "old volvo estate")]),
    ("Maya: You can reach me on 07700 900 412 any evening.", [("phone", "07700900412")]),
    ("Maya: For work stuff use my office address, m.ortiz@kestrel.io.", [("email:work", "m.ortiz@kestrel.io")]),
    ("Maya: Sam's number is 0612 448 190.", []),  # someone else's
    ("Maya: I also work at the Crown on weekends.", []),  # an added job
    ("Maya: I got a second phone, the number is 0470 556 201.", []),
])
def test_frames(text, expected):
    unit = make_unit(text, namespace=MAYA, participants=["Maya"])
    assert facts(unit) == [Fact("maya", *e) for e in expected]


@pytest.mark.parametrize(("text", "changes"), [
    ("Ben: The Volvo is gone, I'm driving a Skoda now.", True),
    ("Ben: Felix and I split up.", True),
    ("Ben: I switched therapists.", True),
    ("Ben: Bea is my trainer now.", True),
    ("Ben: My new teacher is Mr. Castell.", True),
    ("Ben: I drive a Volvo.", False),
    ("Ben: I might sell the Volvo.", False),  # a plan
    ("Ben: I'll switch gyms next month.", False),
    ("Ben: I haven't quit yet.", False),
    ("Ben: I also bought a new bike.", False),  # an addition
    ("Ben: Now I know to save more often.", False),  # "now" that is no state
    ("Ben: We tried a new recipe.", False),  # one more, not another
    ("Ben: Did you sell the Volvo?", False),
    ("Ben: You can't volunteer there anymore.", False),  # the one spoken to
    ("Ben: When I moved to Leeds, I was twenty.", False),  # the time of something else
])
def test_change_statements(text, changes):
    assert is_change(make_unit(text, namespace=("ben",), participants=["Ben"])) is changes


def test_a_change_must_name_the_thing_near_the_change_word():
    unit = make_unit("Ben: The Volvo is gone, and all week long the weather here has been awful.", participants=["Ben"])
    assert names_changed(unit, ["volvo"]) and not names_changed(unit, ["weather"])


def test_statements_are_ordered_by_when_they_were_said_not_by_the_time_they_mention(bow):
    """An engagement said in January with a wedding "next year" is older than a breakup said in March."""
    memory = RippleMem(bow)
    memory.add_conversation(talk("c", ("2026-01-10T10:00:00+00:00", [
        ("Dev", "I'm engaged to Marta, the wedding is planned for next year.")]), ("2026-03-10T10:00:00+00:00", [
            ("Dev", "Marta called off the engagement, I'm single again.")])), namespace=MAYA)
    units = {u.restatement.split(",")[0]: u for u in memory.list_units(MAYA)}
    engaged, single = units["Dev: I'm engaged to Marta"], units["Dev: Marta called off the engagement"]
    assert engaged.metadata["superseded_by"] == single.id and "superseded_by" not in single.metadata
    assert engaged.metadata["valid_until"] == "2026-03-10T00:00:00+00:00"


def test_a_change_statement_supersedes_what_it_names_and_stops_when_deleted(bow):
    memory = RippleMem(bow)
    memory.add_conversation(talk("c", ("2026-01-10T10:00:00+00:00", [
        ("Ben", "I commute on a Vespa scooter, it's perfect for the city."), ("Ben", "The weather is grim.")]),
        ("2026-03-10T10:00:00+00:00", [("Ben", "I sold the Vespa and bought an electric bike for the commute.")])),
        namespace=MAYA)
    by_text = {u.restatement[:20]: u for u in memory.list_units(MAYA)}
    old, new = by_text["Ben: I commute on a "], by_text["Ben: I sold the Vesp"]
    assert old.metadata["superseded_by"] == new.id and old.metadata["superseded_via"] == "change"
    assert old.metadata["superseded_attribute"].startswith("changed:")
    assert "superseded_by" not in by_text["Ben: The weather is "].metadata
    memory.delete([new.id], namespace=MAYA)
    assert "superseded_by" not in memory.get([old.id], namespace=MAYA)[0].metadata
