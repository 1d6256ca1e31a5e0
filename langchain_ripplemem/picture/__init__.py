"""A picture of one recollection: its layout and the self-contained HTML page."""
