"""ApxInf Python frontend: policies over the native ``apxinf_py`` runtime."""

from .policy import AutoPolicy, Pi05Policy

__all__ = ["AutoPolicy", "Pi05Policy"]
