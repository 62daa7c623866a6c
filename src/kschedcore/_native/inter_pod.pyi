"""Type stub of the compiled module inter_pod (what Python code uses of it). A cdef class's
attributes are C fields (`cdef public` / `readonly` in the .pxd) that the type checker cannot
read: they read and write as Any."""
from typing import Any

class InterPodState:
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...
