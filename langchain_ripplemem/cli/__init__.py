"""The ``ripplemem`` command: subcommands, plain-text rendering, the demo, the integrity report."""
