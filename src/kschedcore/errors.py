"""Exceptions raised by kschedcore.

Every problem with user input is a :class:`ValidationError` that names the object and the
field path, so a CLI can print one line and a caller can react to the field.
"""

__all__ = ["KSchedCoreError", "ValidationError", "QuantityError", "ObjectError", "DuplicateError",
           "WorkloadError", "UnsupportedError", "NotFoundError", "StateError"]


class KSchedCoreError(Exception):
    """Base class of every kschedcore exception."""


class ValidationError(KSchedCoreError, ValueError):
    """Input that kube-scheduler's API server would reject, or that kschedcore cannot read.

    ``str(err)`` is ``"<object>: <field>: <message>"``, e.g.
    ``pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3"``.
    """

    def __init__(self, obj: str, field: str, message: str) -> None:
        self.obj = obj
        self.field = field
        self.message = message
        parts = [p for p in (obj, field, message) if p]
        super().__init__(": ".join(parts))

    # the one-line message, also for subclasses that are KeyErrors (KeyError.__str__ quotes it)
    __str__ = Exception.__str__


class QuantityError(ValidationError):
    """A string that is not a valid Kubernetes ``resource.Quantity``."""

    def __init__(self, text: object, obj: str = "", field: str = "") -> None:
        self.text = text
        super().__init__(obj, field, f'invalid quantity "{text}"')


class ObjectError(ValidationError):
    """A Node or Pod (or other object) with a missing, mistyped or invalid field."""


class DuplicateError(ValidationError):
    """Two objects with the same identity (e.g. two nodes with one name)."""


class WorkloadError(ValidationError):
    """A workload file that cannot be read (syntax, unknown document shape)."""


class UnsupportedError(ValidationError):
    """Valid Kubernetes input that needs a plugin kschedcore does not implement yet."""


class NotFoundError(ValidationError, KeyError):
    """An object the scheduler does not have: an unknown pod key or node name given to
    remove_pod, remove_node, update_node, update_pod, assume, cordon, drain, ... Also a
    KeyError, as for a mapping. Methods that mirror an informer delete take ``missing_ok=True``
    to treat an unknown object as kube-scheduler does (nothing happens)."""


class StateError(ValidationError):
    """An operation on an object in the wrong state: a pod assumed or bound twice, an update
    of a pod that is no longer pending, a fork reverted twice."""
