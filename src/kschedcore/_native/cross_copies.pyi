"""Type stub of the compiled module cross_copies (what Python code uses of it)."""
import numpy as np

from .._kernels import NodeKernel
from .pod import CompiledPod

def run_cross_copies(k: NodeKernel, cp: CompiledPod, scan: np.ndarray, start: int, num_to_find: int,
                     n_all_nodes: int, tie_first: bool, chosen: np.ndarray, eq_slot: int, counts: np.ndarray,
                     row_counters: list[np.ndarray], count_dom: np.ndarray, count_col: np.ndarray,
                     limits: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple[int, int, int]: ...
