"""The word classes :mod:`~langchain_ripplemem.text.time.tense` reads a clause's time with.

A simple-present clause with a dated complement ("My passport expires on June 3rd")
is about a scheduled event, so the date is ahead: the futurate present. Linguists
find that reading only for events that can be fixed in advance (a timetable, a
plan, a calendar): "The train leaves on Friday" is fine, "It rains on Friday" odd.
Two classes follow from that:

* :data:`SCHEDULED_EVENTS`: verbs of events that are fixed in advance: beginnings
  and endings (a term starts, a passport expires, a lease runs until a day),
  timetabled movements (a flight leaves), appointments and occasions (we meet, a
  birthday falls on a day, the show airs). After a noun ("my passport expires")
  only these count: a word in -s after a noun is as often a plural ("holiday
  plans", "cheap flights") as a verb, and this class tells the verb.
* :data:`STATES`: verbs of states, minds and perception ("I remember June 3rd",
  "I love Paris in April"), whose present is now, whatever the date says. After a
  subject pronoun ("I", "she") every other verb is an event, so any verb but these
  counts: "I teach a workshop on June 3rd" is as planned as "I move in June".

Three smaller classes: :data:`DUE_STATES`, the adjectives of a state set for a day ("the
rent is due", "the visa is valid until", "the shop is closed on"); :data:`HABITUAL`,
the adverbs of a habit ("I usually go skiing in February": no one occurrence is
meant, so no direction); and :data:`IRREGULAR_PAST`, the simple past of the
irregular verbs (regular ones end in -ed), with the forms that are also nouns or
present forms ("bit", "rose", "read", "set") left out.

Example:
    >>> third_person("expire"), third_person("fly"), third_person("finish"), third_person("have")
    ('expires', 'flies', 'finishes', 'has')

"""

from __future__ import annotations

__all__ = ["AMBIGUOUS_PRESENT", "DUE_STATES", "HABITUAL", "IRREGULAR_PAST", "NOT_VERBS", "SCHEDULED_EVENTS",
           "STATES", "alternation", "third_person"]

SCHEDULED_EVENTS = tuple("""
    start begin open reopen launch resume commence kick premiere debut air release
    end finish close expire lapse conclude stop wrap run last
    leave depart arrive land fly go come head return travel move sail board
    meet visit have get play turn graduate retire renew fall happen take
""".split())
STATES = tuple("""
    think know believe remember recall forget guess suppose mean understand realize realise wonder doubt bet
    imagine assume agree disagree suspect wish love like hate enjoy prefer adore miss appreciate regret fear
    mind care feel see hear notice smell taste sound seem appear look own belong contain include cost weigh
    deserve depend matter say tell mention recommend suggest find consider recognize recognise thank promise
""".split())
DUE_STATES = tuple("due valid open closed over off free busy away available booked scheduled set planned "
                   "slated fixed ready".split())
HABITUAL = tuple("usually always often normally typically generally sometimes rarely seldom never every each "
                 "annually regularly".split())
# Forms that are both present and past ("I read it on Friday"): no tense of their own.
AMBIGUOUS_PRESENT = tuple("read put cut hit set let quit shut cost hurt spread beat bet cast burst split upset "
                          "bid rid shed".split())
# Words after a subject pronoun that are no verb of its ("see you on Friday", "thank you so much").
NOT_VERBS = tuple("""
    a an the my your our his her their its this that these those some any all both each no not
    on in at for to from with by about of as so too very really just also again there here then now
    back out up down off over away around later soon today tonight tomorrow
    guys and or but if when while because do does did don't doesn't didn't can could will would shall
    should may might must am is are was were be been being
""".split())
IRREGULAR_PAST = tuple("""
    went came got took made saw met flew drove left began bought brought ran gave found told said thought felt
    spent wrote won ate sat became held kept knew heard taught sent built paid sold slept swam sang stood wore
    grew threw drew fell forgot caught fought lost chose rode broke woke spoke stole froze
    arose awoke bent bled blew bred burnt clung fed led crept dealt dug drank dreamt dwelt fled flung forbade
    forgave hid hung knelt laid leapt learnt lent meant mistook misunderstood overcame overslept oversaw
    overtook rang sank shook shone shrank slid sought sped spilt spun sprang stank strode struck stung swept
    swore swung tore understood undertook upheld wept withdrew wove wrung
""".split())


def third_person(verb: str) -> str:
    """The third-person singular present of a regular (or "have") base form."""
    if verb == "have":
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in ("a", "e", "i", "o", "u"):
        return verb[:-1] + "ies"
    return verb + "s"


def alternation(words: tuple[str, ...]) -> str:
    """A regex alternation of ``words``, longest first (so no word stops at a shorter prefix)."""
    return "|".join(sorted(set(words), key=lambda word: (-len(word), word)))
