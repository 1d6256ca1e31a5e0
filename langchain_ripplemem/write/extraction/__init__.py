"""Extraction: windows of turns, the extractor protocol, the rule and LLM extractors, known turns, the prompt."""
