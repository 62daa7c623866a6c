"""Deprecated: the compiled kernel is now the package :mod:`kschedcore._kernel`.

This module only re-exports its names so that existing ``from ._kernels import X`` keep
working; new code should import from ``kschedcore._kernel``.
"""
from ._kernel import *  # noqa: F401,F403
from ._kernel import __all__  # noqa: F401
