"""Storage backends: units (Chroma), edges and the namespace log (SQLite, PostgreSQL), writer locks."""
