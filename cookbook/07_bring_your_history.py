"""Bring a history: your ChatGPT or Claude data export as memories, then a look at what is remembered.

Run: python cookbook/07_bring_your_history.py [conversations.json or the export's .zip]   (offline, seconds)

Without an argument it reads a small invented ChatGPT export that ships with the tests: three
chats (moving to Porto with an edited question and a regenerated answer, a German one about
sourdough, a Japanese one about Kyoto), one without text and one malformed, skipped and named.
Each chat becomes one conversation, each message with text one memory with its own time; the
person speaks as ``user``. The same from the command line::

    ripplemem ingest ~/Downloads/chatgpt-export.zip --persist ./memories --namespace me
    ripplemem list --persist ./memories --namespace me
    ripplemem recall "Where am I moving to?" --asker user --persist ./memories --namespace me
    ripplemem export me.jsonl --persist ./memories --namespace me   # and carry it to another store (docs/export.md)

docs/import.md says what is kept and left out of each format, how an interrupted import
resumes, and how fast a year of chats goes in.
"""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_ripplemem import RippleMem
from langchain_ripplemem.conversations.chat_exports import read_chat_export

EXAMPLE = Path(__file__).resolve().parents[1] / "tests" / "unit_tests" / "fixtures" / "exports" / \
    "chatgpt_conversations.json"
NAMESPACE = ("me",)


def main(path: Path = EXAMPLE) -> None:
    export = read_chat_export(path)  # ChatGPT or Claude, told by the chats' fields
    print(export.summary().replace(str(path), path.name))
    for chat in export.skipped:
        print(f"skipped {chat}")
    memory = RippleMem()  # in memory for this example; persist_directory="..." keeps it
    for conv in export.conversations:
        report = memory.add_conversation(conv, namespace=NAMESPACE)
        started = conv.sessions[0].time
        print(f"chat {conv.title!r} of {started:%Y-%m-%d}: {report.turns} messages -> {report.new_units} memories")

    stats = memory.stats(NAMESPACE)
    print(f"remembered: {stats.units} memories of {len(stats.conversations)} chats, "
          f"{stats.first_time:%Y-%m-%d} .. {stats.last_time:%Y-%m-%d}")
    for unit in memory.list_units(NAMESPACE)[:4]:
        when = unit.metadata["session_time"][:16].replace("T", " ")  # the message's own time
        print(f"  {when}  {unit.restatement}")

    question = "Where am I moving with my dog?"
    result = memory.recall(question, namespace=NAMESPACE, asker="user", k=3)
    print(f"recall {question!r}:")
    for recalled in result.memories:
        print(f"  {recalled.unit.restatement}")
    memory.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else EXAMPLE)
