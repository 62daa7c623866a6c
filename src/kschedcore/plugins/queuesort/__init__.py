from .priority_sort import PrioritySort, priority_sort_key

__all__ = ["PrioritySort", "priority_sort_key"]
