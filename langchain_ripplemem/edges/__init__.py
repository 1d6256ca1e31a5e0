"""The typed edges between memories: the edge cache of each namespace, its adjacency read hop by hop, calibration."""
