"""The exceptions a Java failure becomes.

All derive from RuntimeError, which is what headwater raises, so ``except RuntimeError`` written for
headwater keeps working.
"""


class SamplerError(RuntimeError):
    """The sampler failed: bad database, producer failure, JVM problem. Carries the Java message.

    ``file`` is the database file the failure is about when it is one the JVM reported as changed
    under the sampler (truncated while mapped); otherwise None.
    """

    file = None

    @classmethod
    def from_java(cls, exc, prefix: str = "") -> "SamplerError":
        """The error for Java throwable ``exc``: its message chain, and ``file`` when it names one."""
        err = cls(prefix + java_message(exc))
        err.file = _changed_file(exc)
        return err


_MAPPED_FILE_FAULT = "io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException"


def _changed_file(exc):
    """The file of the first MappedFileFaultException in ``exc``'s cause chain, or None."""
    seen = 0
    while exc is not None and seen < 8:
        if str(exc.getClass().getName()) == _MAPPED_FILE_FAULT:
            return str(exc.source())
        exc = exc.getCause()
        seen += 1
    return None


class SamplerConfigError(SamplerError, ValueError):
    """A constructor argument is out of range (Java's IllegalArgumentException)."""


class SamplerShutdown(SamplerError):
    """The sampler has been shut down: no more batches."""


def java_message(exc) -> str:
    """``Class: message`` for a Java throwable and its causes, as one line. A cause whose message the
    line already holds (a typed exception wrapping another with the same words) is left out."""
    parts = []
    said = ""
    seen = 0
    while exc is not None and seen < 8:
        msg = exc.getMessage()
        msg = None if msg is None else str(msg)
        if not (parts and msg and msg in said):
            name = str(exc.getClass().getName())
            parts.append(f"{name}: {msg}" if msg is not None else name)
            said += msg or ""
        exc = exc.getCause()
        seen += 1
    return " (caused by ".join(parts) + ")" * (len(parts) - 1)
