from .taint_toleration import TaintToleration

__all__ = ["TaintToleration"]
