"""The screenshot of ``ripplemem ui`` in ``docs/ui.png``: the demo's conversation, one recall, one memory open.

The demo's conversation (``langchain_ripplemem/data``) is written with the default
encoder into a temporary store, the page is served as ``ripplemem ui`` serves it and
opened in headless Chromium (:mod:`benchmarks.browser`), the demo's first question is
recalled, its best memory opened, and the window saved as a PNG.

    python -m benchmarks.ui_screenshot --out docs/ui.png
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.browser import Chromium, serving
from langchain_ripplemem.cli.demo import NAMESPACE, load_sample
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import format_namespace
from langchain_ripplemem.server.ui_access import MemoryAccess
from langchain_ripplemem.server.ui_page import create_app

__all__ = ["screenshot"]


def screenshot(out: Path, *, width: int = 1440, height: int = 900) -> Path:
    """Write the screenshot to ``out``."""
    conversation, questions = load_sample()
    with tempfile.TemporaryDirectory(prefix="ui-screenshot-") as scratch:
        store = Path(scratch) / "store"
        with RippleMem(persist_directory=store) as memory:
            memory.add_conversation(conversation, namespace=NAMESPACE)
        access = MemoryAccess(lambda: RippleMem(persist_directory=store), per_use=True)
        with serving(create_app(access, store=".ripplemem")) as url, Chromium(width=width, height=height) as browser:
            tab = browser.tab(f"{url}#ns={format_namespace(NAMESPACE)}")
            tab.wait_for("document.body.dataset.ready === '1'")
            tab.type("#query", questions[0]["question"])
            tab.press_enter()
            tab.wait_for("document.body.dataset.recalled === '1'", timeout=120)
            tab.click("#recall-memories li.item")
            tab.wait_for("!!document.getElementById('detail-text')")
            tab.evaluate("new Promise(r => setTimeout(r, 300))")  # the picture's frame lays itself out
            path = tab.screenshot(out)
        access.close()
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", default="docs/ui.png", help="PNG to write (default: %(default)s)")
    print(screenshot(Path(parser.parse_args(argv).out)))


if __name__ == "__main__":
    main()
