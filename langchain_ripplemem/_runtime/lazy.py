"""Names a package exports that load their module on first access, so importing the package stays cheap.

Example:
    >>> namespace = {}
    >>> getattr_ = lazy_getattr("pkg", {"dumps": "json"}, namespace)
    >>> getattr_("dumps").__name__, "dumps" in namespace
    ('dumps', True)
    >>> getattr_("nope")
    Traceback (most recent call last):
    ...
    AttributeError: module 'pkg' has no attribute 'nope'

"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, modules: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__``: each name of ``modules`` imported on first use, then kept in ``namespace``."""
    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
