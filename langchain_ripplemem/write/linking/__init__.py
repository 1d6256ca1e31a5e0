"""Linking new memories to earlier ones: the candidate rows, and the local linking that keeps the best edges."""
