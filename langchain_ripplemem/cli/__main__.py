"""``python -m langchain_ripplemem.cli``: the ``ripplemem`` command."""

import sys

from langchain_ripplemem.cli.commands import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
