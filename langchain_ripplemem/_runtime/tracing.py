"""LangSmith-visible runs for each recollection round.

LangGraph already records one run per node, named after the node. Inside it,
:func:`round_run` opens a child run named ``"<node> round <r>"`` whose metadata
carries the round number, the namespace and the ids the node started from, and
whose outputs carry counts and ids of what the node produced. It goes through
the run's callback manager, so it reaches LangSmith only when the user enabled
tracing (``LANGSMITH_TRACING=true`` and an API key) or passed their own
callbacks, and costs nothing otherwise.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langchain_core.tracers.context import collect_runs
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()
    >>> _ = memory.add_messages([HumanMessage("Biscuit is our beagle.")], namespace="maya")
    >>> with collect_runs() as runs:
    ...     _ = memory.recall("Who is Biscuit?", namespace="maya", callbacks=[runs])
    >>> "tri_view_recall round 0" in {run.name for run in runs.traced_runs[0].child_runs[1].child_runs}
    True

"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config

METADATA_PREFIX = "ripplemem_"


@contextmanager
def round_run(
    config: RunnableConfig | None, node: str, round_number: int, **metadata: Any
) -> Iterator[dict[str, Any]]:
    """Open a child run for one node in one round; fill the yielded dict with outputs."""
    given = (config or {}).get("callbacks")
    if isinstance(given, BaseCallbackManager) and not given.handlers:
        # Inside a graph run the node's manager is configured already (tracing from the
        # environment included): with no handlers there is nothing to record.
        yield {}
        return
    manager = get_callback_manager_for_config(config or {})
    if not manager.handlers:
        yield {}
        return
    meta = {f"{METADATA_PREFIX}node": node, f"{METADATA_PREFIX}round": round_number}
    meta.update({f"{METADATA_PREFIX}{k}": v for k, v in metadata.items()})
    manager = manager.copy()
    manager.add_metadata(meta, inherit=False)
    run = manager.on_chain_start(
        None, {"round": round_number, **metadata}, name=f"{node} round {round_number}", run_type="chain"
    )
    outputs: dict[str, Any] = {}
    try:
        yield outputs
    except BaseException as err:
        run.on_chain_error(err)
        raise
    run.on_chain_end(outputs)
