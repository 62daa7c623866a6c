from .default_preemption import DefaultPreemption
from .evaluator import Evaluator

__all__ = ["DefaultPreemption", "Evaluator"]
