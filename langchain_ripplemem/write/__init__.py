"""The write path: from extracted units to stored, linked memories."""
