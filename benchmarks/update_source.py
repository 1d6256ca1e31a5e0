"""Write ``benchmarks/data/update_cases.json`` from the cases below (all text original).

Each case is a small memory of its own (4 sessions of small talk, no haystack) in which
one person states something about themselves and, a month or more later, either
*changes* it (an update: a new home, employer, number, car, diet, coach, partner,
schedule, instrument, favourite) or says something that leaves it standing (a
non-update: a second pet, a second job, a second phone, another person's change, a
later statement on another subject that shares words with it).

An update case asks three questions: about now (the newer statement must be found and
rank above the older one), about the past ("before", "used to", "in March": the older
one above the newer), and the present-tense question again ``as_of`` a day between the
two statements (the older one found, the newer not above it). A non-update case asks
one question that needs what it names kept.

The split is fixed here, before any run: cases 2, 4, 7, 9, 12, 14, ... (the 2nd and
4th of every five, in file order) are held out (40 %).

    python -m benchmarks.update_source    # make update-cases
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from benchmarks.small_memory_source import CHAT

__all__ = ["KEPT", "UPDATES", "build"]

OUT = Path(__file__).resolve().parent / "data" / "update_cases.json"
UA = ("user", "assistant")

# What the other speaker answers right after a statement: says nothing of its own.
REPLIES = ["Oh, good to know.", "Nice, thanks for telling me.", "Ha, okay!", "Noted.", "That makes sense.",
           "Interesting, I had no idea.", "Got it.", "Fair enough."]

# (kind, speakers, index of the one whose attribute it is, older statement, newer statement,
#  question about now, question about the past ({old_month}: the month of the older statement))
UPDATES: list[tuple[str, tuple[str, str], int, str, str, str, str]] = [
    ("home", ("Lena", "Omar"), 0, "I rent a tiny flat in Ghent, right by the canal.",
     "Big news: we moved into a house in Antwerp at the start of the month.",
     "Where does Lena live?", "Where did Lena live before moving to Antwerp?"),
    ("home", UA, 0, "For context, I live in Leeds and work from home most days.",
     "I relocated to Bristol a couple of weeks ago, so local tips should be for Bristol now.",
     "Which city am I living in now?", "Which city was I living in back in {old_month}?"),
    ("home", ("Priya", "Jonas"), 1, "I'm living in a shared house in Uppsala with three other students.",
     "I've left Uppsala, I'm based in Gothenburg now for the new lab.",
     "Where is Jonas based currently?", "Where did Jonas use to live?"),
    ("home", ("Ines", "Carl"), 0, "Our apartment in Porto has a view of the river.",
     "We sold the Porto apartment and we're now settled in a cottage near Braga.",
     "Where does Ines live at the moment?", "Where was Ines's home previously?"),
    ("home", ("Kim", "Sara"), 1, "Home for me is a loft in Aarhus, above a bike shop.",
     "I packed up the loft, my new address is in Odense.",
     "What city is Sara's home in now?", "Where did Sara live in {old_month}?"),
    ("work", ("Maya", "Tom"), 0, "I work at a small design studio called Pixelweave.",
     "I handed in my notice at Pixelweave and joined Northwind Labs on Monday.",
     "Which company does Maya work for now?", "Where did Maya work before Northwind Labs?"),
    ("work", UA, 0, "I'm a pharmacist at the Boots on King Street.",
     "I left Boots and I'm now working for the hospital pharmacy at St Mary's.",
     "Where do I work?", "Where was I working in {old_month}?"),
    ("work", ("Rosa", "Dev"), 1, "My job is at the city library, in the archives department.",
     "I got hired by the university museum, so no more library shifts.",
     "Who is Dev's employer at the moment?", "Where did Dev work previously?"),
    ("work", ("Hana", "Leo"), 1, "I'm employed by Vestas, mostly on turbine maintenance.",
     "Since last month I work for Orsted instead of Vestas.",
     "Which company employs Leo currently?", "Which company did Leo work for originally?"),
    ("work", ("Mira", "Paul"), 0, "I teach maths at Hillside Secondary.",
     "I switched schools, I'm at Greenfield Academy now, still teaching maths.",
     "At which school does Mira teach now?", "Which school did Mira teach at before switching?"),
    ("contact", ("Ana", "Ben"), 0, "If you need me, my mobile is 0612 448 190.",
     "I changed my number, the new one is 0687 220 315.",
     "What is Ana's phone number?", "What was Ana's old phone number?"),
    ("contact", UA, 0, "My email for the newsletter is j.ortega@fastmail.com.",
     "Please use jortega.studio@proton.me from now on, I closed the fastmail account.",
     "Which email address should be used for me now?", "Which email address did I give at first?"),
    ("contact", ("Omar", "Lena"), 0, "You can reach me on 07700 900 412 any evening.",
     "New phone number since Tuesday: 07700 900 981.",
     "How can Omar be reached by phone these days?", "What number did Omar have in {old_month}?"),
    ("contact", ("Dev", "Rosa"), 1, "My landline at the cottage is 01632 960 222.",
     "We got rid of the landline, just call my mobile, 07911 123 765.",
     "Which number should you call to reach Rosa?", "Which number did Rosa use previously?"),
    ("vehicle", ("Ben", "Ana"), 0, "I drive an old blue Volvo estate, it has 300,000 km on it.",
     "The Volvo is gone, I'm driving a secondhand Skoda Octavia now.",
     "What car does Ben drive?", "What car did Ben drive before the Skoda?"),
    ("vehicle", UA, 0, "I commute on a Vespa scooter, it's perfect for the city.",
     "I sold the Vespa and bought an electric bike for the commute.",
     "What do I commute on now?", "What did I use to commute on?"),
    ("vehicle", ("Tom", "Maya"), 0, "My car is a red Mazda MX-5, great in summer, useless in snow.",
     "Traded the Mazda in for a Subaru Forester, finally something for the winter.",
     "Which car does Tom have now?", "What car did Tom own in {old_month}?"),
    ("vehicle", ("Sara", "Kim"), 1, "I get around in my dad's old Land Rover Defender.",
     "The Defender went back to dad, I bought a Toyota Yaris of my own.",
     "What car is Kim driving these days?", "What did Kim drive previously?"),
    ("diet", ("Jonas", "Priya"), 1, "I've been vegetarian for about six years.",
     "I've gone fully vegan, no eggs or cheese either anymore.",
     "What diet does Priya follow?", "What diet did Priya follow before going vegan?"),
    ("diet", UA, 0, "I eat pretty much everything, no restrictions at all.",
     "My doctor put me on a low-sodium diet, so I have to watch the salt now.",
     "Do I have any dietary restrictions now?", "What were my eating habits like in {old_month}?"),
    ("diet", ("Carl", "Ines"), 0, "I'm strictly vegan, have been since university.",
     "After the blood tests I started eating fish again, so pescatarian now.",
     "What does Carl eat these days?", "What diet did Carl use to follow?"),
    ("diet", ("Leo", "Hana"), 1, "I'm doing keto, so no bread or pasta for me.",
     "I dropped keto, I'm back to normal meals with plenty of pasta.",
     "Is Hana on a special diet now?", "What diet was Hana on previously?"),
    ("people", ("Paul", "Mira"), 0, "My running coach is a guy called Stefan, very strict about intervals.",
     "Stefan moved away, so Aisha coaches me now, she is much more relaxed.",
     "Who is Paul's running coach?", "Who coached Paul before Aisha?"),
    ("people", UA, 0, "My GP is Dr. Okafor at the Elm Street practice.",
     "I registered with a new GP, Dr. Lindqvist, closer to my office.",
     "Who is my GP now?", "Who was my GP in {old_month}?"),
    ("people", ("Ana", "Ben"), 1, "My piano teacher, Mrs. Haddad, comes every Thursday.",
     "Mrs. Haddad retired, my new teacher is Mr. Castell.",
     "Who teaches Ben piano now?", "Who was Ben's piano teacher originally?"),
    ("people", ("Tom", "Maya"), 1, "Javier is my personal trainer at the gym.",
     "I stopped training with Javier, Bea is my trainer now.",
     "Who trains Maya at the gym these days?", "Who was Maya's personal trainer previously?"),
    ("people", ("Kim", "Sara"), 1, "My therapist is Dr. Brandt, I see him every other week.",
     "I switched therapists, I see Dr. Moreau now.",
     "Who is Sara's therapist currently?", "Who did Sara see for therapy before?"),
    ("partner", ("Omar", "Lena"), 1, "My boyfriend Felix is coming to the party too.",
     "Felix and I split up, and I've started seeing someone called Ravi.",
     "Who is Lena dating now?", "Who was Lena's boyfriend before Ravi?"),
    ("partner", UA, 0, "My girlfriend Chloe loves Italian food, any ideas for her birthday?",
     "Chloe and I broke up a while ago; my partner now is Sam.",
     "Who is my partner?", "Who was I dating in {old_month}?"),
    ("partner", ("Dev", "Rosa"), 0, "I'm engaged to Marta, the wedding is planned for next year.",
     "Marta called off the engagement, I'm single again.",
     "Is Dev in a relationship at the moment?", "Who was Dev engaged to previously?"),
    ("partner", ("Ines", "Carl"), 0, "My husband Pedro does all the cooking at home.",
     "Pedro and I are divorced now, and I'm together with Nuno.",
     "Who is Ines's partner nowadays?", "Who was Ines married to before?"),
    ("schedule", ("Maya", "Tom"), 1, "Our team sync is every Monday at 9.",
     "The team sync moved to Wednesdays at 2 in the afternoon.",
     "When is the team sync?", "When was the team sync held originally?"),
    ("schedule", UA, 0, "My Spanish class is on Tuesday evenings at 7.",
     "The Spanish class got moved to Thursday mornings at 10.",
     "When is my Spanish class now?", "When did my Spanish class meet in {old_month}?"),
    ("schedule", ("Hana", "Leo"), 0, "Choir rehearsal is at 6:30 every Friday.",
     "From now on choir rehearsals start at 8 on Fridays, the hall is booked earlier.",
     "What time does Hana's choir rehearse?", "What time did choir rehearsal use to start?"),
    ("schedule", ("Priya", "Jonas"), 1, "The book club meets on the first Sunday of the month.",
     "We changed the book club to the last Saturday of each month.",
     "When does Jonas's book club meet?", "When did the book club meet before the change?"),
    ("schedule", ("Ben", "Ana"), 1, "My physio appointments are Wednesdays at 4.",
     "The physio rescheduled me to Mondays at noon.",
     "When are Ana's physio appointments now?", "When were Ana's physio appointments previously?"),
    ("hobby", ("Rosa", "Dev"), 0, "I play the cello in an amateur orchestra.",
     "I gave up the cello, I play the double bass in a jazz trio now.",
     "What instrument does Rosa play?", "What instrument did Rosa play before the double bass?"),
    ("hobby", UA, 0, "I've been learning the guitar for two years.",
     "I switched from guitar to the ukulele, it's easier on my hands.",
     "Which instrument am I learning these days?", "What instrument was I learning in {old_month}?"),
    ("hobby", ("Leo", "Hana"), 0, "My sport is rowing, I train on the river four mornings a week.",
     "I quit rowing and took up climbing at the bouldering gym.",
     "What sport does Leo do now?", "What sport did Leo use to do?"),
    ("hobby", ("Sara", "Kim"), 0, "I play saxophone in the university big band.",
     "The band needed a trumpet player, so I'm on trumpet now and my sax is for sale.",
     "What does Sara play in the band now?", "What did Sara play in the band originally?"),
    ("favourite", ("Carl", "Ines"), 0, "My favourite spot in town is the rooftop café above the bookshop.",
     "These days my favourite place to hang out is the botanical garden.",
     "What is Carl's favourite spot in town?", "What was Carl's favourite spot before the botanical garden?"),
    ("favourite", UA, 0, "My favourite band is Khruangbin, I listen to them every day.",
     "Lately my favourite band is Fontaines D.C., I've had them on repeat.",
     "What is my favourite band?", "Which band was my favourite in {old_month}?"),
    ("favourite", ("Mira", "Paul"), 1, "Pho is my favourite dish, I could eat it every day.",
     "My new favourite dish is the lamb tagine from the Moroccan place.",
     "What is Paul's favourite dish now?", "What was Paul's favourite dish before?"),
    ("favourite", ("Jonas", "Priya"), 0, "I love hiking the Kungsleden trail more than any other.",
     "Honestly the Hoga Kusten trail has become my favourite hike.",
     "Which trail does Jonas like best?", "Which trail did Jonas love most at first?"),
]

# (kind, speakers, first statement (speaker index, text), second statement (speaker index, text),
#  question, the statements it needs: "both", or "first" when the second is about something else)
KEPT: list[tuple[str, tuple[str, str], tuple[int, str], tuple[int, str], str, str]] = [
    ("pets", ("Ana", "Ben"), (0, "We have a grey tabby called Miso."),
     (0, "We adopted a second cat last weekend, a black kitten named Pepper."), "What cats does Ana have?", "both"),
    ("pets", UA, (0, "My dog Rufus is a beagle, he's seven."),
     (0, "We also got a rabbit, Clover, for the kids."), "What pets do I have?", "both"),
    ("pets", ("Tom", "Maya"), (0, "I keep two goldfish in a tank in the living room."),
     (0, "I brought home another pet, a lizard called Spike."), "Which animals does Tom keep at home?", "both"),
    ("work", ("Dev", "Rosa"), (0, "I work at the bakery on Mill Road, early shifts."),
     (0, "I started a second job, bartending at the Crown on weekends."), "Where does Dev work?", "both"),
    ("work", UA, (0, "I work for a logistics firm called Transvia as an analyst."),
     (0, "On the side I've started freelancing for a small web agency too."), "What jobs do I have?", "both"),
    ("contact", ("Kim", "Sara"), (0, "My number is 0470 112 908, text me anytime."),
     (0, "I got a second phone for work, that number is 0470 556 201."), "What phone numbers does Kim have?",
     "both"),
    ("contact", ("Hana", "Leo"), (1, "My personal email is leo.brandt@mail.com."),
     (1, "For work stuff use my office address, l.brandt@kestrel.io."), "Which email addresses does Leo use?",
     "both"),
    ("vehicle", ("Priya", "Jonas"), (0, "I drive a little Fiat Panda to work."),
     (0, "We bought a camper van for weekends away, the Panda stays for daily driving."),
     "What vehicles does Priya have?", "both"),
    ("vehicle", UA, (0, "I cycle to work on my road bike."),
     (0, "I also bought a cheap car for the winter months."), "What vehicles do I own?", "both"),
    ("hobby", ("Ines", "Carl"), (0, "I play the violin in a string quartet."),
     (0, "I've also started piano lessons, just for fun."), "What instruments does Ines play?", "both"),
    ("hobby", ("Omar", "Lena"), (0, "I swim three times a week at the lido."),
     (0, "I joined a five-a-side football team as well."), "What sports does Omar do?", "both"),
    ("home", ("Maya", "Tom"), (0, "I live in a flat in Utrecht near the station."),
     (1, "I moved to Rotterdam last month, closer to my job."), "Where does Maya live now?", "first"),
    ("home", ("Rosa", "Dev"), (0, "I live in Seville, in the old town."),
     (0, "When the rain started we moved to the covered terrace and kept eating."), "Where does Rosa live?",
     "first"),
    ("favourite", ("Paul", "Mira"), (0, "My favourite film is Spirited Away."),
     (0, "My favourite book is The Left Hand of Darkness."), "What are Paul's favourite film and book?", "both"),
    ("schedule", ("Ben", "Ana"), (0, "Our standup is at 9:15 every morning."),
     (0, "The dentist moved my appointment to Friday at 3."), "When is Ben's standup?", "first"),
    ("work", UA, (0, "I work at Halden Bank in the risk team."),
     (1, "People who work at fintech startups often find the pace faster than at a bank."),
     "Where do I work?", "first"),
    ("partner", ("Sara", "Kim"), (0, "My wife Ingrid is a nurse."),
     (1, "I just got divorced, it's been a rough year."), "Who is Sara married to?", "first"),
]

_START = date(2025, 1, 6)


def _sessions(n: int, speakers: tuple[str, str], first: tuple[int, str, str], second: tuple[int, str, str],
              gap: int) -> list[dict[str, Any]]:
    """Four sessions of small talk; ``first`` (speaker index, text, key) in the first, ``second`` in the third."""
    chat = CHAT[(5 * n) % len(CHAT):] + CHAT[: (5 * n) % len(CHAT)]
    day0 = _START + timedelta(days=9 * n)
    days = (day0, day0 + timedelta(days=gap // 2), day0 + timedelta(days=gap), day0 + timedelta(days=gap + 6))
    out, k = [], 0
    for s, day in enumerate(days):
        turns = []
        for i in range(3 + (s + n) % 2):
            turns.append({"speaker": speakers[(i + s) % 2], "text": chat[k % len(chat)]})
            k += 1
        said = {0: first, 2: second}.get(s)
        if said is not None:
            who, text, key = said
            at = 1 + n % 2
            turns[at:at] = [{"speaker": speakers[who], "text": text, "key": key},
                            {"speaker": speakers[1 - who], "text": REPLIES[(n + s) % len(REPLIES)]}]
        out.append({"time": f"{day.isoformat()}T18:00:00+00:00", "turns": turns})
    return out


def build() -> dict[str, Any]:
    """The suite file's content: every case laid out in its sessions, with its questions and split."""
    cases = []
    rows = [("update", c) for c in UPDATES] + [("kept", c) for c in KEPT]
    for n, (what, case) in enumerate(rows, 1):
        split = "heldout" if n % 5 in (2, 4) else "tune"
        gap = 40 + (17 * n) % 61  # 40-100 days between the two statements
        if what == "update":
            kind, speakers, who, old, new, now, past = case  # type: ignore[misc]
            sessions = _sessions(n, speakers, (who, old, "old"), (who, new, "new"), gap)
            old_day = date.fromisoformat(sessions[0]["time"][:10])
            between = (old_day + timedelta(days=gap // 2)).isoformat()
            questions = [
                {"role": "now", "question": now, "evidence": ["new"], "outranks": ["old"]},
                {"role": "past", "question": past.format(old_month=old_day.strftime("%B")), "evidence": ["old"],
                 "outranks": ["new"]},
                {"role": "as_of", "question": now, "evidence": ["old"], "outranks": ["new"], "as_of": between},
            ]
        else:
            kind, speakers, first, second, question, needs = case  # type: ignore[misc]
            sessions = _sessions(n, speakers, (*first, "first"), (*second, "second"), gap)
            questions = [{"role": "kept", "question": question,
                          "evidence": ["first", "second"] if needs == "both" else ["first"], "outranks": []}]
        cases.append({"id": f"{kind}-{n:02d}", "kind": kind, "split": split, "update": what == "update",
                      "speakers": list(speakers), "asker": "user" if speakers == UA else None,
                      "questions": questions, "sessions": sessions})
    return {"name": "ripplemem update suite", "version": 1,
            "license": "CC BY 4.0 (written for langchain-ripplemem)",
            "description": "Knowledge updates (one case, one namespace, 4 sessions of small talk, no haystack): "
            "a statement about oneself and, 40-100 days later, a change of it (update cases: questions about "
            "now, about the past, and as_of a day between) or a statement that leaves it standing (kept cases: "
            "a second pet, job or phone, another person's change, a later statement on another subject). "
            "Split fixed before any run.",
            "cases": cases}


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
