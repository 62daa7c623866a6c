"""Exceptions raised by kschedcore.

Every problem with user input is a :class:`ValidationError` that names the object and the
field path, so a CLI can print one line and a caller can react to the field.
"""


class KSchedCoreError(Exception):
    """Base class of every kschedcore exception."""


class ValidationError(KSchedCoreError, ValueError):
    """Input that kube-scheduler's API server would reject, or that kschedcore cannot read.

    ``str(err)`` is ``"<object>: <field>: <message>"``, e.g.
    ``pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3"``.
    """

    def __init__(self, obj: str, field: str, message: str):
        self.obj = obj
        self.field = field
        self.message = message
        parts = [p for p in (obj, field, message) if p]
        super().__init__(": ".join(parts))


class QuantityError(ValidationError):
    """A string that is not a valid Kubernetes ``resource.Quantity``."""

    def __init__(self, text, obj: str = "", field: str = ""):
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
