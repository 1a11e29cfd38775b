"""apxtui: a terminal explorer of an inference engine's execution path, by static analysis."""

__version__ = "0.1.0"
