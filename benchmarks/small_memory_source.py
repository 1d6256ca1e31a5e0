"""Write ``benchmarks/data/small_memory_cases.json`` from the cases below (all text original).

Each case is a small memory of its own: 4 sessions of small talk holding an *option* turn
(what the question names) and a *constraint* turn said in another session, which shares a
rare word or name with the option turn and almost nothing with the question. The split is
fixed here, before any run: every third case (ids 3, 6, ...) plus case 1 is held out (40 %).

    python -m benchmarks.small_memory_source    # make small-memory-cases
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "small_memory_cases.json"

# Small talk, said by either side; each case takes its own run of these.
CHAT = [
    "How was your weekend?", "Pretty quiet, mostly laundry and a long nap.", "It rained all day here.",
    "I finally finished that podcast series everyone talks about.", "Work has been hectic this week.",
    "Same here, too many meetings.", "Did you watch the match last night?", "No, I fell asleep early.",
    "I tried a new recipe for banana bread, it came out fine.", "The neighbours are repainting their fence again.",
    "My sister called, she says hi.", "I need a holiday, honestly.", "The bus was late three times this week.",
    "I started reading a thriller, can't put it down.", "We should catch up properly soon.",
    "Sounds good to me.", "Ha, that is so typical.", "I spent the evening fixing the wifi router.",
    "The café downstairs changed its opening hours.", "I've been going to bed way too late.",
    "My plants are finally growing again.", "Traffic was terrible this morning.", "I cleaned out the garage.",
    "Let me know how it goes.", "Good luck with everything!", "I bought new running shoes.",
    "The heating in the office is broken again.", "I'm trying to drink more water.",
    "We had pizza for dinner, nothing fancy.", "It's been so windy lately.",
]

# (kind, speakers, question, option turn (speaker index, text), constraint turn (speaker index, text))
CASES = [
    ("diet", ("Ana", "Ben"), "Can Ben eat at the Thai place Ana recommended?",
     (0, "The Thai place on Rue Mercière does an amazing peanut curry."),
     (1, "My doctor told me I'm allergic to peanuts, so no more satay for me.")),
    ("diet", ("Maya", "Tom"), "Should Tom order the pasta special at Luigi's?",
     (0, "Luigi's pasta special this week comes with a creamy gorgonzola sauce."),
     (1, "I found out I'm lactose intolerant, gorgonzola and I are done.")),
    ("diet", ("user", "assistant"), "Is the cake recipe you suggested okay for my nephew?",
     (1, "For the party, a hazelnut sponge cake with chocolate ganache is an easy crowd pleaser."),
     (0, "My nephew Arlo cannot have hazelnut, his throat swells up.")),
    ("diet", ("Priya", "Jonas"), "Can Jonas come to the barbecue Priya is hosting?",
     (0, "For Saturday's barbecue I'm grilling pork ribs and chorizo for everyone."),
     (1, "I stopped eating chorizo and all pork years ago, for religious reasons.")),
    ("pets", ("Lena", "Omar"), "Can Omar stay in Lena's guest room next weekend?",
     (0, "The guest room is ready, although Biscuit sleeps on that bed most days."),
     (1, "Cat hair sets off my asthma, so I keep away from anywhere Biscuit has been.")),
    ("pets", ("user", "assistant"), "Which houseplant should I buy for the living room?",
     (1, "A sago palm would look great in a bright living room and needs little water."),
     (0, "Our dog Mochi chews anything green, so nothing toxic like sago leaves in reach.")),
    ("pets", ("Ines", "Carl"), "Can Carl bring his dog to Ines's flat?",
     (1, "I'd love to bring Rufus along when I visit, he goes everywhere with me."),
     (0, "Our landlord forbids dogs, and Rufus barking would get us a warning.")),
    ("pets", ("Hana", "Leo"), "Should Hana get the lilies for the dinner table?",
     (1, "Lilies from the flower market would brighten the dinner table."),
     (0, "The vet warned me lilies can poison our kitten Miso.")),
    ("cars", ("Ben", "Ana"), "Can Ana borrow Ben's car for the road trip?",
     (0, "You can take my car for the trip, the old Renault is all yours."),
     (1, "The Renault broke down on the motorway last month, the gearbox is shot.")),
    ("cars", ("user", "assistant"), "Is the parking garage you suggested a good fit for my car?",
     (1, "The Harbourside garage is cheap, though its ceiling is only two metres high."),
     (0, "I just got a camper van, it stands nearly three metres high.")),
    ("cars", ("Rosa", "Dev"), "Can Dev drive the rental Rosa booked?",
     (0, "I booked us a manual Peugeot for the rental, it was the cheapest."),
     (1, "I never learned to drive a manual, only automatics.")),
    ("cars", ("Kim", "Sara"), "Could Kim tow the trailer to the lake?",
     (0, "I'll tow the boat trailer with the Fiat, it has a hitch."),
     (1, "The mechanic said the Fiat clutch won't survive any more towing.")),
    ("places", ("Ana", "Ben"), "Should Ana accept the room Ben found for her family's stay?",
     (1, "I found a charming room in Lyon, fourth floor with a balcony."),
     (0, "Since her hip surgery Mum cannot manage stairs, and many Lyon buildings lack lifts.")),
    ("places", ("user", "assistant"), "Is the beach you recommended good for my holiday in August?",
     (1, "Playa Zarautz is a lovely beach with gentle waves for families."),
     (0, "Zarautz will be packed in August because of the surf championship.")),
    ("places", ("Mira", "Paul"), "Should Paul book the cabin Mira found?",
     (0, "I found a cabin near Lake Tahoe with a hot tub and a fireplace."),
     (1, "Last winter the road to Tahoe was closed for a week by snow.")),
    ("places", ("Jo", "Sam"), "Can Sam meet Jo at the bookshop café on Tuesday?",
     (0, "Let's meet at the bookshop café on Via Roma on Tuesday."),
     (1, "The shops on Via Roma close every Tuesday for the street market.")),
    ("people", ("Nora", "Eli"), "Should Eli invite Greta to the dinner party?",
     (1, "I'm thinking of inviting Greta to the dinner party on Friday."),
     (0, "Greta and my brother broke up badly, they can't be in the same room.")),
    ("people", ("user", "assistant"), "Who should I ask to be my referee for the job?",
     (1, "Your former manager Dominik would make a strong referee."),
     (0, "Dominik retired and moved to Portugal, he doesn't answer emails anymore.")),
    ("people", ("Ava", "Raj"), "Can Ava's cousin help Raj move house?",
     (0, "My cousin Teodor has a van and loves helping people move."),
     (1, "Teodor hurt his back at the gym, he's not lifting anything for months.")),
    ("jobs", ("Lucy", "Max"), "Should Max apply for the position at Lucy's company?",
     (0, "Northwind is hiring a data analyst, you should apply."),
     (1, "I signed a non-compete that bars me from joining Northwind until next year.")),
    ("jobs", ("user", "assistant"), "Is the evening class you suggested a fit for my schedule?",
     (1, "The pottery course at the Kiln Collective runs Wednesday evenings."),
     (0, "My new shifts at the hospital are Wednesday nights, right when the Kiln Collective meets.")),
    ("jobs", ("Tara", "Finn"), "Can Finn take the freelance gig Tara offered?",
     (0, "I have a freelance gig designing logos for Bramble Studio."),
     (1, "My contract says I can't freelance for Bramble Studio since they are our client.")),
    ("health", ("Iris", "Noah"), "Is the hike Iris planned okay for Noah?",
     (0, "I planned a hike up to the Brienzer Rothorn ridge, it's very steep at the end."),
     (1, "My cardiologist said no steep climbing like the Rothorn after the stent.")),
    ("health", ("user", "assistant"), "Can I take the cold medicine you mentioned?",
     (1, "A decongestant with pseudoephedrine should clear your sinuses quickly."),
     (0, "My blood pressure pills don't mix with pseudoephedrine, the pharmacist said.")),
    ("health", ("Zoë", "Marek"), "Should Marek join Zoë's sauna evening?",
     (0, "Zoë here: I booked the sauna at Łazienki spa for Thursday evening."),
     (1, "I'm pregnant, the midwife told me to avoid the sauna and hot tubs.")),
    ("travel", ("Ana", "Ben"), "Can Ben go on the trip to Kyoto Ana suggested?",
     (0, "Let's go to Kyoto in April for the cherry blossoms."),
     (1, "My passport expires before April and the renewal takes months.")),
    ("travel", ("user", "assistant"), "Is the flight you found good for my trip?",
     (1, "There's a cheap flight via Reykjavik with a six-hour layover."),
     (0, "Six-hour layovers are impossible for me, I have to pick up my son at noon.")),
    ("travel", ("Elif", "Tom"), "Should Tom take the night train Elif recommended?",
     (0, "The night train to Vienna has sleeper cabins with bunk beds."),
     (1, "I can't sleep in bunk beds, I get claustrophobic in those cabins.")),
    ("gifts", ("Clara", "Ravi"), "Is the gift Ravi chose a good idea for Clara?",
     (1, "I'm getting Clara a bouquet of sunflowers for her birthday."),
     (0, "Sunflowers make me sneeze for days, pollen is my nemesis.")),
    ("gifts", ("user", "assistant"), "Is the present you suggested right for my father?",
     (1, "A bottle of single malt whisky is a classic present for a father."),
     (0, "My father quit drinking two years ago, he's proud of staying sober, whisky included.")),
    ("gifts", ("Lin", "Olu"), "Would Olu like the concert tickets Lin bought?",
     (0, "I got us tickets to see Fleetwood Revival at the arena."),
     (1, "Loud arenas give me migraines, I walked out of the last Fleetwood Revival show.")),
    ("gifts", ("Sofia", "Hugo"), "Should Hugo give Sofia the perfume he picked?",
     (1, "I picked a jasmine perfume for Sofia, it smells lovely."),
     (0, "Strong jasmine scents give me headaches, I can't even walk past that shop.")),
]


def build() -> dict:
    """The suite file's content: every case of ``CASES`` laid out in its sessions, with its split."""
    cases = []
    for n, (kind, speakers, question, option, constraint) in enumerate(CASES, 1):
        chat = CHAT[(3 * n) % len(CHAT):] + CHAT[: (3 * n) % len(CHAT)]
        sessions = 4 + n % 2  # 4 or 5 sessions
        per = 3 + n % 2  # 3 or 4 small-talk turns each
        # The constraint is said before the option (it is what later makes the option wrong), in another session.
        where = {1: constraint, sessions - 1: option} if n % 3 else {0: constraint, 2: option}
        out, k = [], 0
        for s in range(sessions):
            turns = []
            for i in range(per):
                turns.append({"speaker": speakers[i % 2], "text": chat[k % len(chat)]})
                k += 1
            if s in where:
                who, text = where[s]
                key = "option" if where[s] is option else "constraint"
                turns.insert(1 + n % 2, {"speaker": speakers[who], "text": text, "key": key})
            out.append({"time": f"2026-0{1 + s}-{10 + n % 15:02d}T18:00:00+00:00", "turns": turns})
        split = "heldout" if n % 3 == 0 or n == 1 or n % 10 == 5 else "tune"
        cases.append({"id": f"{kind}-{n:02d}", "kind": kind, "split": split, "speakers": list(speakers),
                      "question": question, "evidence": ["option", "constraint"], "sessions": out})
    return {"name": "ripplemem small-memory suite", "version": 1,
            "license": "CC BY 4.0 (written for langchain-ripplemem)",
            "description": "Small memories (one case, one namespace, 13-25 turns in 4-5 sessions, no haystack): "
            "the question names an option; the needed constraint turn, said in another session, shares a rare "
            "word or name with the option turn and little with the question. Split fixed before any run.",
            "cases": cases}


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
