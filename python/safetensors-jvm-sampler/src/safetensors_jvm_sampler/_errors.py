"""The exceptions a Java failure becomes.

All derive from RuntimeError, which is what headwater raises, so ``except RuntimeError`` written for
headwater keeps working.
"""


class SamplerError(RuntimeError):
    """The sampler failed: bad database, producer failure, JVM problem. Carries the Java message."""


class SamplerConfigError(SamplerError, ValueError):
    """A constructor argument is out of range (Java's IllegalArgumentException)."""


class SamplerShutdown(SamplerError):
    """The sampler has been shut down: no more batches."""


def java_message(exc) -> str:
    """``Class: message`` for a Java throwable and its causes, as one line."""
    parts = []
    seen = 0
    while exc is not None and seen < 8:
        msg = exc.getMessage()
        name = str(exc.getClass().getName())
        parts.append(f"{name}: {msg}" if msg is not None else name)
        exc = exc.getCause()
        seen += 1
    return " (caused by ".join(parts) + ")" * (len(parts) - 1)
