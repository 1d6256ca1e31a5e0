"""Time in text: grounding time phrases to intervals, their tense, calendar intervals, relative times."""
