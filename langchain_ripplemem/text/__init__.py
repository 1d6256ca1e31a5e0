"""Text analysis both paths import: lexical tokens, languages, names, identifying cues, cue scores, times."""
