"""Tokenise every LoCoMo turn with whichever ``langchain_ripplemem`` is on the path: tokens and time per turn.

Run it once per tokeniser (``PYTHONPATH=/path/to/other/checkout``) and compare the
two JSON files with ``--compare``: how many turns' tokens changed, and whether any
pure-ASCII turn did (none may: English is tokenised as it always was).

    python scripts/lexical_cost.py locomo10.json --out /tmp/new.json
    python scripts/lexical_cost.py --compare /tmp/old.json /tmp/new.json
"""

from __future__ import annotations

import argparse
import json
import time


def _turns(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return [turn["text"] for sample in data for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list) for turn in session if turn.get("text")]


def run(path: str, out: str, repeats: int = 3) -> None:
    """Tokens of every turn, and the best of ``repeats`` cold passes' time per turn (caches cleared)."""
    from langchain_ripplemem.index import lexical
    texts = _turns(path)
    best = float("inf")
    for _ in range(repeats):
        for cached in (lexical.stem, lexical.lexical_token_set, *(
                [lexical._analyse] if hasattr(lexical, "_analyse") else [])):
            cached.cache_clear()
        start = time.perf_counter()
        tokens = [lexical.lexical_tokens(t) for t in texts]
        best = min(best, time.perf_counter() - start)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"module": lexical.__file__, "turns": len(texts), "us_per_turn": 1e6 * best / len(texts),
                   "texts": texts, "tokens": tokens}, f, ensure_ascii=False)
    print(f"{lexical.__file__}: {len(texts)} turns, {1e6 * best / len(texts):.1f} us a turn")


def compare(old: str, new: str) -> None:
    """Turns whose tokens differ, split by whether the turn is pure ASCII."""
    with open(old, encoding="utf-8") as f:
        a = json.load(f)
    with open(new, encoding="utf-8") as f:
        b = json.load(f)
    changed = [i for i, (x, y) in enumerate(zip(a["tokens"], b["tokens"], strict=True)) if x != y]
    ascii_changed = [i for i in changed if a["texts"][i].isascii()]
    non_ascii = sum(not t.isascii() for t in a["texts"])
    print(f"{len(a['texts'])} turns, {non_ascii} not pure ASCII; tokens changed in {len(changed)} "
          f"({len(ascii_changed)} pure ASCII); {a['us_per_turn']:.1f} -> {b['us_per_turn']:.1f} us a turn")
    for i in changed[:15]:
        print(f"  {a['texts'][i][:70]!r}\n    {a['tokens'][i]}\n    {b['tokens'][i]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", nargs="?")
    parser.add_argument("--out")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
    elif args.locomo and args.out:
        run(args.locomo, args.out)
    else:
        parser.error("give LOCOMO and --out, or --compare OLD NEW")


if __name__ == "__main__":
    main()
