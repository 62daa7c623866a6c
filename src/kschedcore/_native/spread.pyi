"""Type stub of the compiled module spread (what Python code uses of it). A cdef class's
attributes are C fields (`cdef public` / `readonly` in the .pxd) that the type checker cannot
read: they read and write as Any."""
from typing import Any

import numpy as np

class SpreadState:
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...

def domain_limits(domains: np.ndarray, dom: np.ndarray, base: np.ndarray, values: np.ndarray,
                  start: np.ndarray) -> np.ndarray: ...
