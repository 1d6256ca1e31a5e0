"""One namespace in memory: its index (rows, marks, lifecycle state, sessions), snapshots, sync, stats."""
