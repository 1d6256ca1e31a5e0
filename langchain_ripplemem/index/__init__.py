"""The per-namespace index: search structures, their snapshot, sync and cache bounds."""
