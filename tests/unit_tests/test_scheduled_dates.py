"""A dated event told in the simple present is ahead; told in the past, behind (issue 52, item 4).

Said on Sunday 6 December 2026, "My passport expires on June 3rd" means June 2027:
a simple-present verb with a dated complement tells a scheduled event (the futurate
present), unless the verb is a state's ("I love Paris in July"), the clause tells a
habit ("We always fly ... in July") or is past ("My passport expired on June 3rd").
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_ripplemem.text.time.timeparse import ground_time

DEC6 = datetime(2026, 12, 6, 10, 0, tzinfo=timezone.utc)


def day_of(text: str) -> str:
    """The first day of the last phrase ``text`` grounds, said on DEC6."""
    return ground_time(text, DEC6)[-1][1].start.date().isoformat()


@pytest.mark.parametrize(("text", "expected"), [
    # the sentences
    ("My passport expires on June 3rd.", "2027-06-03"),
    ("The rent is due on July 1st.", "2027-07-01"),
    ("The party is on September 5th.", "2027-09-05"),
    ("My birthday is on January 20th.", "2027-01-20"),
    ("I will fly to Rome on June 10th.", "2027-06-10"),
    # other verbs of scheduled events, other date forms
    ("My insurance lapses on June 30th.", "2027-06-30"),
    ("My subscription renews on July 2nd.", "2027-07-02"),
    ("The show premieres on September 12th.", "2027-09-12"),
    ("The lease runs until August 31st.", "2027-08-31"),
    ("It takes place on July 15th.", "2027-07-15"),
    ("My passport expires on the 3rd of June.", "2027-06-03"),
    ("My passport expires in June.", "2027-06-01"),
    ("The warranty expires on Friday.", "2026-12-11"),
    # a state set for a day
    ("Her visa is valid until September 9th.", "2027-09-09"),
    ("My passport is due for renewal on June 3rd.", "2027-06-03"),
    ("The museum is closed on July 4th.", "2027-07-04"),
    ("The report is due on Friday.", "2026-12-11"),
    # any event after a subject pronoun, and obligations and reminders ahead
    ("I teach a workshop on June 3rd.", "2027-06-03"),
    ("She presents her thesis on July 7th.", "2027-07-07"),
    ("I need to renew it by July 3rd.", "2027-07-03"),
    ("Remember to call the bank on Friday.", "2026-12-11"),
    # an explicit year wins
    ("My passport expires on June 3rd, 2026.", "2026-06-03"),
])
def test_a_scheduled_event_in_the_present_is_the_next_occurrence(text: str, expected: str) -> None:
    assert day_of(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # past tense points back
    ("My passport expired on June 3rd.", "2026-06-03"),
    ("I moved on January 20th.", "2026-01-20"),
    ("The party was on September 5th.", "2026-09-05"),
    ("The rent was due on July 1st.", "2026-07-01"),
    ("I also fed my fish frozen brine shrimp on June 1st.", "2026-06-01"),
    ("We drank too much on Friday.", "2026-12-04"),
    ("I used the coupon on Sunday.", "2026-11-29"),
    # remembering an event is of the past
    ("I remember buying my boots on July 15th.", "2026-07-15"),
    ("I recall reading it on August 3rd.", "2026-08-03"),
    # a state's present is now, not the date's: the date stays the nearer one
    ("I love Paris in July.", "2026-07-01"),
    ("I remember the party on August 3rd.", "2026-08-03"),
    # a habit has no one occurrence ahead
    ("We always fly to Lisbon in July.", "2026-07-01"),
    # a form both present and past, an adverb before it: no tense of its own
    ("I read the article on Friday.", "2026-12-04"),
    ("I actually just set up my new TV on Saturday.", "2026-12-05"),
    # a date in a noun phrase, a name, a possessive: no predicate of the date
    ("This is a photo from July 4th.", "2026-07-04"),
    ("This is Maya on July 4th.", "2026-07-04"),
    ("Maya's party on July 4th was great.", "2026-07-04"),
    ("I'd be happy to help you compare prices for your trip in July.", "2026-07-01"),
])
def test_past_states_habits_and_noun_phrases_do_not_point_ahead(text: str, expected: str) -> None:
    assert day_of(text) == expected


def test_minimal_pairs_differ_by_the_verb_alone() -> None:
    assert (day_of("We fly to Lisbon in July."), day_of("We always fly to Lisbon in July.")) == (
        "2027-07-01", "2026-07-01")
    assert (day_of("I teach in Paris in July."), day_of("I love Paris in July.")) == ("2027-07-01", "2026-07-01")


SUBJECTS = ["My passport", "The lease", "Her contract", "The exhibition", "Registration", "The course"]
# (present, past): verbs of scheduled events and states set for a day, in both tenses.
VERBS = [("expires on", "expired on"), ("ends on", "ended on"), ("closes on", "closed on"),
         ("is due on", "was due on"), ("runs until", "ran until"), ("is on", "was on"), ("starts on", "started on"),
         ("opens on", "opened on"), ("lapses on", "lapsed on"), ("is valid until", "was valid until"),
         ("begins on", "began on"), ("finishes on", "finished on")]
# Dates six to eleven months away either way: the nearer occurrence is no answer.
DATES = ["June 3rd", "July 14th", "August 1st", "September 30th", "October 9th", "the 20th of June"]


@given(st.sampled_from(SUBJECTS), st.sampled_from(VERBS), st.sampled_from(DATES))
def test_present_points_ahead_and_past_back(subject: str, verbs: tuple[str, str], when: str) -> None:
    present, past = verbs
    ((_, ahead),) = ground_time(f"{subject} {present} {when}.", DEC6)
    ((_, back),) = ground_time(f"{subject} {past} {when}.", DEC6)
    assert ahead.start > DEC6 > back.end
