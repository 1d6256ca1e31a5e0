"""The throwaway PostgreSQL cluster the shared-backend tests run against."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_the_cluster_answers_on_loopback_and_keeps_transactions(postgres_server):
    psycopg = pytest.importorskip("psycopg")
    assert postgres_server.host == "127.0.0.1"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        assert int(conn.execute("SHOW server_version_num").fetchone()[0]) >= 150000
        conn.execute("CREATE TABLE IF NOT EXISTS fixture_probe (n int)")
        with pytest.raises(psycopg.errors.DivisionByZero), conn.transaction():
            conn.execute("INSERT INTO fixture_probe VALUES (1)")
            conn.execute("SELECT 1 / 0")
        assert conn.execute("SELECT count(*) FROM fixture_probe").fetchone()[0] == 0  # rolled back
