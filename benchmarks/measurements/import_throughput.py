"""Import benchmark (not a test): a year of chats, a generated 10,000-message ChatGPT export, ingested end to end.

The export is generated (:func:`synthetic_chatgpt_export`: deterministic text, the shape of
ChatGPT's ``conversations.json``, a hidden system message and an edited question now and then)
and written to a temporary file. In one process, for the encoder with one worker and with two
(``MiniLMOnnxEmbeddings(workers=...)``):

* the import as ``ripplemem ingest`` does it: read the export, then add each chat to a persistent
  store (messages/s, CPU seconds, the write path's seconds by stage);
* the encoder alone on the same texts, chat by chat as the import embeds them (texts/s);

slice by slice, the two settings taking turns (first one, then the other), so a change in the
machine's load hits both alike: the ratios are the steady figures on a shared machine. On every
fifth slice the encoder also runs with two onnxruntime threads inside each pass
(``intra_op_num_threads=2``) beside one. The vectors of every setting are compared bit for bit.

    python -m benchmarks.measurements.import_throughput --out results/import_throughput.json --doc docs/import.md
    python -m benchmarks.measurements.import_throughput --table results/import_throughput.json --doc docs/import.md

(``make bench-import``.) ``--doc`` rewrites the page's table between its ``import-speed`` markers;
``--table`` makes it from a results file without measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.measurements.demo_table import replace_table
from benchmarks.measurements.output import emit
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.conversations.chat_exports import read_chat_export
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings, embed_texts
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation, Usage
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows

__all__ = ["synthetic_chatgpt_export"]

EXTRACTION = WriteConfig().extraction
NAMESPACE = ("me",)
_PEOPLE = ["Maya", "Tomás", "Priya", "Jonas", "Aiko", "Sam", "Lena", "Omar", "Grace", "Mateo"]
_PLACES = ["Lisbon", "Porto", "Kyoto", "Berlin", "Lyon", "Toronto", "Nairobi", "Oslo", "Seville", "Hanoi"]
_TOPICS = ["sourdough", "marathon training", "a job interview", "the garden", "a birthday present", "tax forms",
           "learning Japanese", "a used bike", "the wedding speech", "the cat's diet", "a kitchen renovation",
           "a road trip", "a chess opening", "a budget spreadsheet", "knee pain", "a book club pick"]
_ASKS = ["Can you help me with {t}?", "I need ideas for {t}, {p} suggested I ask you.",
         "What should I know about {t} before I go to {c}?", "My friend {p} and I are stuck on {t}.",
         "I moved to {c} last month and now {t} is on my mind.", "Quick question about {t}: is it too late to start?"]
_DETAILS = ["I have about {n} euros to spend.", "It has to be done by {d}.", "{p} thinks I'm overthinking it.",
            "I tried twice already and it didn't work.", "I'd rather not spend more than {n} minutes a day on it.",
            "The last time I did this was in {c}.", ""]
_ANSWERS = ["Here is a plan for {t} that fits {n} minutes a day.", "Start small: the first week is about habits.",
            "Given that you're in {c}, the local options are better than ordering online.",
            "A common mistake with {t} is doing too much at once.", "Ask {p} to check the second step with you.",
            "By {d} you can have a first version done.", "Keep notes of what changes each time, so you can compare.",
            "If it still fails, the cause is usually the temperature or the timing, not the recipe itself.",
            "Budget around {n} euros and keep a little aside for surprises."]
_DAYS = ["Friday", "next Monday", "the end of the month", "June 3rd", "the weekend", "March"]


def synthetic_chatgpt_export(messages: int = 10_000, per_chat: int = 20, seed: int = 0,
                             start: float = 1_704_067_200.0) -> list[dict[str, Any]]:
    """A ChatGPT-shaped export of ``messages`` user and assistant messages with text, ``per_chat`` a chat.

    Chats start a year apart spread (``start``: 2024-01-01) and alternate user and assistant;
    each opens with a hidden system message, and every seventh has a question edited once (the
    old wording on a branch of its own), which the import leaves out. Same arguments, same export.

    Example:
        >>> export = synthetic_chatgpt_export(messages=6, per_chat=4)
        >>> len(export), sum(1 for n in export[0]["mapping"].values() if n["message"]) >= 4
        (2, True)
    """
    rng = random.Random(seed)
    chats = []
    for c in range((messages + per_chat - 1) // per_chat):
        count = min(per_chat, messages - c * per_chat)
        when = start + c * 365 * 86_400 / max(1, messages // per_chat) + rng.random() * 3600
        nodes: dict[str, dict[str, Any]] = {}
        parent = _node(nodes, f"c{c}-root", None, None)
        parent = _node(nodes, f"c{c}-system", parent, _message("system", "", when, hidden=True))
        fill = {"t": rng.choice(_TOPICS), "c": rng.choice(_PLACES), "p": rng.choice(_PEOPLE)}
        for m in range(count):
            when += 30 + rng.random() * 600
            fill.update(n=str(rng.randint(2, 90) * 5), d=rng.choice(_DAYS))
            if m % 2 == 0:
                text = " ".join(filter(None, [rng.choice(_ASKS).format(**fill), rng.choice(_DETAILS).format(**fill)]))
                if c % 7 == 3 and m == 2:  # an edited question: the first wording stays on its own branch
                    _node(nodes, f"c{c}-m{m}-old", parent, _message("user", text + " (draft)", when - 20))
                parent = _node(nodes, f"c{c}-m{m}", parent, _message("user", text, when))
            else:
                sentences = [rng.choice(_ANSWERS).format(**fill) for _ in range(rng.randint(2, 6))]
                parent = _node(nodes, f"c{c}-m{m}", parent, _message("assistant", " ".join(sentences), when))
        chats.append({"id": f"synthetic-{seed}-{c:05d}", "conversation_id": f"synthetic-{seed}-{c:05d}",
                      "title": f"{fill['t'].capitalize()} ({fill['c']})", "create_time": nodes[f"c{c}-system"]
                      ["message"]["create_time"], "update_time": when, "mapping": nodes, "current_node": parent,
                      "moderation_results": [], "is_archived": False})
    return chats


def _message(role: str, text: str, when: float, hidden: bool = False) -> dict[str, Any]:
    return {"author": {"role": role, "name": None, "metadata": {}}, "create_time": when,
            "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
            "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {}, "recipient": "all"}


def _node(nodes: dict[str, dict[str, Any]], node_id: str, parent: str | None, message: dict[str, Any] | None) -> str:
    nodes[node_id] = {"id": node_id, "message": message and {"id": node_id, **message}, "parent": parent,
                      "children": []}
    if parent is not None:
        nodes[parent]["children"].append(node_id)
    return node_id


def _texts(conv: Conversation, extractor: RuleBasedExtractor) -> list[str]:
    """What the import embeds of a chat: its units' restatements."""
    windows = make_windows(conv, EXTRACTION.window_size, EXTRACTION.window_overlap)
    return list({u.id: u.restatement for w in windows for u in extractor.extract(w, NAMESPACE).units}.values())


class _Clock:
    """Wall and CPU seconds of the timed blocks, summed."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def __enter__(self) -> _Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu


TABLE_START, TABLE_END = "<!-- import-speed: made by `make bench-import`; edit neither by hand -->", \
    "<!-- /import-speed -->"


def speed_table(result: dict[str, Any]) -> str:
    """The markdown table of a results dict: each encoder setting's import and encoder rates, and the ratios.

    Example:
        >>> rates = {"import_messages_per_s": 50.0, "encoder_texts_per_s": 80.0,
        ...          "import_units_per_s_over_encoder_texts_per_s": 0.6}
        >>> print(speed_table({"export": {"messages": 10}, "settings": {"1 worker": rates},
        ...                    "ratios": {"import_2_workers_over_1": 1.2}}).splitlines()[2])
        | 1 worker | 50.0 | 80.0 | 0.6 |
    """
    rows = [f"| {name} | {r['import_messages_per_s']} | {r['encoder_texts_per_s']} | "
            f"{r['import_units_per_s_over_encoder_texts_per_s']} |" for name, r in result["settings"].items()]
    ratios = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in result["ratios"].items())
    return "\n".join(["| encoder | import, messages/s | encoder alone, texts/s | import / encoder |",
                      "|---|---:|---:|---:|", *rows, "",
                      f"{result['export']['messages']:,} messages. Ratios: {ratios}."])


def write_table(result: dict[str, Any], doc: str) -> None:
    """Rewrite ``doc``'s table between the import-speed markers."""
    page = Path(doc)
    page.write_text(replace_table(page.read_text(encoding="utf-8"), speed_table(result), TABLE_START, TABLE_END),
                    encoding="utf-8")


def main() -> None:
    """Generate the export, import it with each encoder setting, print (and with ``--out`` write) the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--slices", type=int, default=20, help="the two settings take turns this many times")
    parser.add_argument("--out", default=None)
    parser.add_argument("--doc", default=None, help="rewrite this page's import-speed table")
    parser.add_argument("--table", default=None, help="a results file to make the table from, measuring nothing")
    args = parser.parse_args()
    if args.table:
        write_table(json.loads(Path(args.table).read_text(encoding="utf-8")), args.doc or "docs/import.md")
        return

    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="ripplemem-import-"))
    path = work / "conversations.json"
    path.write_text(json.dumps(synthetic_chatgpt_export(args.messages)), encoding="utf-8")
    settings = {"1 worker": MiniLMOnnxEmbeddings(), "2 workers": MiniLMOnnxEmbeddings(workers=2)}
    inner = MiniLMOnnxEmbeddings(intra_op_num_threads=2)
    for emb in (*settings.values(), inner):
        emb.embed_query("warm up")  # model load is not throughput
    clocks = {name: {"import": _Clock(), "encoder": _Clock()} for name in settings}
    inner_clocks = {"1 thread": _Clock(), "2 threads": _Clock()}
    memories: dict[str, RippleMem] = {}
    stages = {name: Usage() for name in settings}  # seconds by stage, summed over the setting's imports
    for name, emb in settings.items():
        with clocks[name]["import"]:
            export = read_chat_export(path, "chatgpt")  # each setting reads the file, as ingest does
            memories[name] = RippleMem(emb, persist_directory=work / name.replace(" ", "-"))
    extractor = RuleBasedExtractor(EXTRACTION)
    texts = [_texts(conv, extractor) for conv in export.conversations]  # not timed: the same for every setting
    n_chats = len(export.conversations)
    bounds = [n_chats * s // args.slices for s in range(args.slices + 1)]
    vectors: dict[str, list[np.ndarray]] = {name: [] for name in [*settings, "intra-op 2"]}
    for s in range(args.slices):
        chats = range(bounds[s], bounds[s + 1])
        for name in (list(settings) if s % 2 == 0 else list(settings)[::-1]):
            emb = settings[name]
            with clocks[name]["encoder"]:
                part = [embed_texts(emb, texts[c], EXTRACTION.embed_batch_size) for c in chats]
            if s % 5 == 0:
                vectors[name] += part
            with clocks[name]["import"]:
                for c in chats:
                    report = memories[name].add_conversation(export.conversations[c], namespace=NAMESPACE)
                    stages[name] = stages[name].add(report.usage)
        if s % 5 == 0:  # threads inside a pass, beside one thread on the same texts
            with inner_clocks["2 threads"]:
                vectors["intra-op 2"] += [embed_texts(inner, texts[c], EXTRACTION.embed_batch_size) for c in chats]
            with inner_clocks["1 thread"]:
                for c in chats:
                    embed_texts(settings["1 worker"], texts[c], EXTRACTION.embed_batch_size)
        print(f"slice {s + 1}/{args.slices}: " + ", ".join(
            f"{name} import {clocks[name]['import'].wall:.0f}s encoder {clocks[name]['encoder'].wall:.0f}s"
            for name in settings), flush=True)

    messages, units = export.messages, sum(map(len, texts))
    inner_texts = sum(len(texts[c]) for s in range(0, args.slices, 5) for c in range(bounds[s], bounds[s + 1]))
    stored = {name: memory.list_units(NAMESPACE) for name, memory in memories.items()}
    first = memories["1 worker"].reader.namespace_index(NAMESPACE).matrix
    same_store = {name: [u.id for u in stored[name]] == [u.id for u in stored["1 worker"]]
                  and np.array_equal(memories[name].reader.namespace_index(NAMESPACE).matrix, first)
                  for name in settings}
    for memory in memories.values():
        memory.close()

    def rates(name: str) -> dict[str, Any]:
        imp, enc = clocks[name]["import"], clocks[name]["encoder"]
        return {"import_seconds": round(imp.wall, 1), "import_cpu_seconds": round(imp.cpu, 1),
                "import_messages_per_s": round(messages / imp.wall, 1),
                "import_messages_per_cpu_s": round(messages / imp.cpu, 1),
                "encoder_seconds": round(enc.wall, 1), "encoder_cpu_seconds": round(enc.cpu, 1),
                "encoder_texts_per_s": round(units / enc.wall, 1), "encoder_texts_per_cpu_s": round(units / enc.cpu, 1),
                "import_units_per_s_over_encoder_texts_per_s": round(enc.wall / imp.wall, 3),
                "seconds_by_stage": {k: round(v, 1) for k, v in stages[name].seconds.items()}}

    one, two = clocks["1 worker"], clocks["2 workers"]
    result = {
        "export": {"chats": export.chats, "messages": messages, "units": units, "skipped": len(export.skipped),
                   "left_out": dict(export.left_out), "generator": "synthetic_chatgpt_export(seed=0)"},
        "settings": {name: rates(name) for name in settings},
        "ratios": {
            "import_2_workers_over_1": round(one["import"].wall / two["import"].wall, 3),
            "encoder_2_workers_over_1": round(one["encoder"].wall / two["encoder"].wall, 3),
            "encoder_intra_op_2_threads_over_1": round(inner_clocks["1 thread"].wall / inner_clocks["2 threads"].wall,
                                                       3),
        },
        "intra_op_threads": {"texts": inner_texts, **{
            name: {"seconds": round(c.wall, 1), "cpu_seconds": round(c.cpu, 1)} for name, c in inner_clocks.items()}},
        "vectors_identical_to_1_worker": {
            name: all(np.array_equal(a, b) for a, b in zip(vectors[name], vectors["1 worker"], strict=True))
            for name in ("2 workers", "intra-op 2")},
        "stores_identical": same_store,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
    }
    emit(result, args.out)
    if args.doc:
        write_table(result, args.doc)


if __name__ == "__main__":
    main()
