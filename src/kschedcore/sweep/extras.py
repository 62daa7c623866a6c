"""The sweep's optional dependencies: a missing one is one line saying which extra to install."""
import importlib
from types import ModuleType

from ..errors import KSchedCoreError


class MissingExtra(KSchedCoreError):
    """An optional dependency a requested output or runner needs is not installed."""


def require(module: str, what: str, extra: str) -> ModuleType:
    """The module, imported; MissingExtra when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{what} needs {module}, which is not installed: "
                           f"pip install 'kschedcore[{extra}]'") from None
