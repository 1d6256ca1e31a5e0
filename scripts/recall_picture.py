"""Draw one recollection and take its screenshot in headless Chromium (the picture in docs/).

    python scripts/recall_picture.py --out docs/recall_picture.png

It runs the offline demo's first question as ``ripplemem demo --html DIR`` does
(MiniLM, rule-based units, the recommended ``RecallConfig()``, 10 memories), writes that page
to a temporary directory and screenshots it with the first expanded memory
selected (``page.html#e1``), so the panel shows why it was found. Needs Debian's
``chromium`` (``apt-get install chromium``). The browser test reuses the helpers.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

# As root Chromium needs --no-sandbox; without the background-networking flags it
# tries to reach Google's hosts at every start, which this offline machine refuses.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                  "--hide-scrollbars"]
TIMEOUT = 120.0  # hang guard on a loaded machine


def find_chromium() -> str | None:
    """Debian's chromium (or another Chromium/Chrome on PATH)."""
    return next((path for name in ("chromium", "chromium-browser", "google-chrome")
                 if (path := shutil.which(name))), None)


def run_chromium(url: str, *args: str, executable: str | None = None) -> str:
    """Run headless Chromium on ``url`` with a fresh profile; returns its stdout (e.g. ``--dump-dom``)."""
    exe = executable or find_chromium()
    if exe is None:
        raise FileNotFoundError("no chromium on PATH: apt-get install chromium")
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        done = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, url],
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr[-1500:]}")
    return done.stdout


def screenshot(url: str, png: Path, width: int = 1280, height: int = 900) -> Path:
    """A PNG of ``url`` as a ``width`` x ``height`` window shows it."""
    png.parent.mkdir(parents=True, exist_ok=True)
    run_chromium(url, f"--window-size={width},{height}", f"--screenshot={png.resolve()}")
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot to {png}")
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/recall_picture.png"))
    args = parser.parse_args(argv)
    from langchain_ripplemem.cli.demo import run_demo

    with tempfile.TemporaryDirectory() as pages:
        run_demo(k=10, out=lambda line: None, html_dir=pages)
        page = Path(pages) / "q1.html"
        selected = "#e1" if 'data-label="e1"' in page.read_text(encoding="utf-8") else "#m1"
        print(f"wrote {screenshot(page.resolve().as_uri() + selected, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
