"""The ``ripplemem`` command: subcommands, plain-text rendering, the demo, the integrity report.

``main`` (in :mod:`~langchain_ripplemem.cli.commands`) is the console script's entry point.
"""

from langchain_ripplemem.cli.commands import main

__all__ = ["main"]
