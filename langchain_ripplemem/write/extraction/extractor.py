"""What every extractor consumes and returns."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from langchain_ripplemem.schemas import FailedWindow, MemoryUnit, Namespace, Session, Turn, Usage


class Window(BaseModel):
    """Consecutive turns of one conversation handed to the extractor at once."""

    model_config = ConfigDict(frozen=True)

    conversation_id: str
    index: int = Field(ge=0, description="position of the window in its conversation")
    items: tuple[tuple[Session, Turn], ...]

    @property
    def turn_ids(self) -> list[str]:
        """Ids of the window's turns, in order."""
        return [turn.id for _, turn in self.items]


class ExtractionResult(BaseModel):
    """Units from one window, or the reason there are none. Never both partially."""

    units: list[MemoryUnit] = Field(default_factory=list)
    failed: FailedWindow | None = None
    warnings: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


@runtime_checkable
class Extractor(Protocol):
    """Turns a window of turns into validated memory units for ``namespace``."""

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Extract units synchronously."""
        ...

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Extract units asynchronously."""
        ...
