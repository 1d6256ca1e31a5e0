"""What recall keeps per row of a view, and reads for many memories at once, equals the one-memory rules.

Cue bonuses (recall/cue_bonus.py) bit for bit; places (recall/assembly.py) as the view grows.
"""

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.assembly import _place, row_places
from langchain_ripplemem.recall.cue_bonus import cue_bonus, cue_bonuses, row_speakers
from langchain_ripplemem.schemas import MemoryUnit, QueryCues, TimeInterval

from .conftest import make_unit

NS = ("bonus",)
T0 = datetime(2025, 5, 1, 9, 30, tzinfo=timezone.utc)


def interval(start_minutes: int, length_minutes: int) -> TimeInterval:
    start = T0 + timedelta(minutes=start_minutes, microseconds=start_minutes % 7)
    return TimeInterval(start=start, end=start + timedelta(minutes=length_minutes))


def units(n: int, seed: int) -> list[MemoryUnit]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        when = None if rng.random() < 0.2 else interval(int(rng.integers(-90 * 1440, 90 * 1440)),
                                                        int(rng.integers(0, 3 * 1440)))
        speaker = [None, "", "Maya", "SAM", "Jo"][int(rng.integers(5))]
        out.append(make_unit(f"memory {i}", namespace=NS, turns=[str(i)], time=when,
                             metadata={} if speaker is None else {"speaker": speaker}))
    return out


@pytest.mark.parametrize("config", [RecallConfig(), RecallConfig(scoring={"speaker_bonus": 0.3, "time_bonus": 0.7}),
                                    RecallConfig(scoring={"speaker_bonus": 0.0, "time_bonus": 0.0})])
@pytest.mark.parametrize("query_time", [None, (0, 60), (-400, 2 * 1440), (5000, 0)])
def test_cue_bonuses_equal_each_memorys_cue_bonus_exactly(config, query_time):
    memories = units(300, seed=len(str(query_time)))
    index = NamespaceIndex(NS)
    index.add(memories, np.eye(len(memories), dtype=np.float32))
    cues = QueryCues(query="q", participants=["maya", "jo"],
                     time=None if query_time is None else interval(*query_time))
    rows = np.random.default_rng(3).permutation(len(memories))[:200]
    got = cue_bonuses(index, rows, cues, config.scoring).tolist()
    assert got == [cue_bonus(memories[row], cues, config.scoring) for row in rows.tolist()]  # exact, not approx
    if config.scoring.time_bonus and cues.time is not None:
        assert len(set(got)) > 10  # the times really differ: the test compares more than constants


def test_row_speakers_follow_the_index_as_it_grows():
    memories = units(6, seed=1)
    index = NamespaceIndex(NS)
    index.add(memories[:4], np.eye(6, dtype=np.float32)[:4])
    assert len(row_speakers(index)) == 4
    index.add(memories[4:], np.eye(6, dtype=np.float32)[4:])
    speakers = [m.metadata.get("speaker") for m in memories]
    assert row_speakers(index) == [s.lower() if s else None for s in speakers]


def test_row_places_follow_the_index_as_it_grows():
    memories = [m.model_copy(update={"metadata": {**m.metadata, "turn_index": i}}) if i % 2 else m
                for i, m in enumerate(units(6, seed=2))]
    index = NamespaceIndex(NS)
    index.add(memories[:3], np.eye(6, dtype=np.float32)[:3])
    assert row_places(index) == [_place(m) for m in memories[:3]]
    index.add(memories[3:], np.eye(6, dtype=np.float32)[3:])
    assert row_places(index) == [_place(m) for m in memories]
    assert [p[2] for p in row_places(index)] == [-1, 1, -1, 3, -1, 5]
