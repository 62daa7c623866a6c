"""Custom Filter and Score plugins (the plugin API's public face; see framework/custom.py)."""
from .framework.custom import (CustomFilter, CustomPostFilter, CustomPreFilter, CustomScore, NativeFilter,  # noqa: F401
                               NativeScore, NodeArrays, NodeColumns, compile_native, default_normalize)
from .framework.interface import (SKIP, CycleState, Error, PostFilterResult, PreFilterResult, Status,  # noqa: F401
                                  Unschedulable, UnschedulableAndUnresolvable)

__all__ = ["CustomFilter", "CustomPostFilter", "CustomPreFilter", "CustomScore", "NativeFilter",
           "NativeScore", "NodeArrays", "NodeColumns", "compile_native", "default_normalize", "SKIP",
           "CycleState", "Error", "PostFilterResult", "PreFilterResult", "Status", "Unschedulable",
           "UnschedulableAndUnresolvable"]
