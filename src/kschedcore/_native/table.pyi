"""Type stub of the compiled module table (what Python code uses of it)."""
from typing import Any, Iterable

import numpy as np

def add_usage(requested: np.ndarray, nonzero: np.ndarray, pod_count: np.ndarray, row: int, cols: np.ndarray,
              vals: np.ndarray, non_zero: tuple[int, int], sign: int) -> None: ...
def refresh_image_counts(rows: Iterable[int], n_images: np.ndarray, images: np.ndarray, image_count: np.ndarray,
                         image_nn: np.ndarray) -> None: ...
def add_rows_usage(table: Any, rows: np.ndarray, req: np.ndarray, nonzero_req: np.ndarray, count: np.ndarray,
                   sign: int) -> None: ...
