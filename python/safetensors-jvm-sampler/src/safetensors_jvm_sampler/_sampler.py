"""headwater's ``Sampler`` over the JVM sampler, with zero-copy numpy batches.

Memory rule: a batch's native memory goes back to the sampler's pool only when nothing in Python can
reach it any more. Every array of a batch has, as its numpy ``base``, a small exporter object that
holds a strong reference to the batch's owner object; views, slices and jax arrays that alias the
memory keep that base alive. The owner's ``weakref.finalize`` closes the Java batch, so the pool
reuses the memory only after the last array over it is gone. There is deliberately no ``close()``.
"""

from __future__ import annotations

import os
import threading
import weakref

import jpype
import numpy as np

from . import _lifecycle
from ._errors import SamplerConfigError, SamplerError, SamplerShutdown, java_message
from ._jvm import start_jvm

_PKG = "io.github.semyonsinchenko.safetensors.sampler"

# safetensors dtype name -> numpy typestr (little-endian, as the JVM writes them).
_TYPESTR = {
    "BOOL": "|b1", "U8": "|u1", "I8": "|i1", "U16": "<u2", "I16": "<i2", "U32": "<u4", "I32": "<i4",
    "U64": "<u8", "I64": "<i8", "F16": "<f2", "F32": "<f4", "F64": "<f8",
}
_F16_DTYPES = {"float16": "<f2", "uint16": "<u2"}
_EMBEDDING_DIM = 256


class _J:
    """Java classes, looked up once after the JVM is up."""

    _lock = threading.Lock()
    ready = False

    @classmethod
    def load(cls):
        if cls.ready:
            return cls
        with cls._lock:
            if not cls.ready:
                cls.Sampler = jpype.JClass(f"{_PKG}.Sampler")
                cls.SamplerConfig = jpype.JClass(f"{_PKG}.SamplerConfig")
                cls.ShutdownException = jpype.JClass(f"{_PKG}.SamplerShutdownException")
                cls.NumpyBinding = jpype.JClass(f"{_PKG}.python.NumpyBinding")
                cls.IllegalArgument = jpype.JClass("java.lang.IllegalArgumentException")
                cls.Paths = jpype.JClass("java.nio.file.Paths")
                cls.MemorySegment = jpype.JClass("java.lang.foreign.MemorySegment")
                cls.Synthetic = jpype.JClass(f"{_PKG}.synth.SyntheticDatabase")
                cls.ready = True
        return cls


class _BatchOwner:
    """One per batch: alive while any array over the batch is; its finalizer closes the Java batch."""

    __slots__ = ("__weakref__",)


class _Export:
    """numpy's ``base`` for one tensor: the array interface plus a reference to the batch owner."""

    __slots__ = ("__array_interface__", "_owner")

    def __init__(self, interface, owner):
        self.__array_interface__ = interface
        self._owner = owner


def _close_batch(jbatch):
    # Runs when the last array over the batch is gone (any thread, GIL held). After the JVM has
    # shut down (interpreter exit) there is nothing left to return the memory to.
    if jpype.isJVMStarted():
        try:
            jbatch.close()
        except Exception:  # pragma: no cover - close() is idempotent and does not throw
            pass


def _view(address: int, shape: tuple[int, ...], typestr: str, owner) -> np.ndarray:
    """A read-only array over native memory, kept alive by (and keeping alive) ``owner``."""
    if address == 0 or 0 in shape:
        out = np.zeros(shape, dtype=np.dtype(typestr))
        out.flags.writeable = False
        return out
    return np.asarray(_Export({"version": 3, "shape": shape, "typestr": typestr, "data": (address, True)}, owner))


def _u64(name: str, value) -> int:
    """A u64 argument as Java's signed long with the same bits."""
    v = int(value)
    if not 0 <= v < 1 << 64:
        raise SamplerConfigError(f"Failed to create sampler: {name} must be in [0, 2^64), got {value}")
    return v - (1 << 64) if v >= 1 << 63 else v


def _u32(name: str, value) -> int:
    v = int(value)
    if not 0 <= v < 1 << 31:
        raise SamplerConfigError(f"Failed to create sampler: {name} must be in [0, 2^31), got {value}")
    return v


def _shutdown_java(jsampler):
    if jpype.isJVMStarted():
        jsampler.shutdown()


class Sampler:
    """headwater's ``Sampler``: same arguments, defaults, methods and batch dicts.

    Extras (keyword-only, not in headwater): ``threads`` (workers per batch; default: all
    processors; batches do not depend on it), ``emit_categorical_range`` (also emit
    ``cat_emb_start``/``cat_emb_count``), ``f16_dtype`` (``"float16"``, the default, or ``"uint16"``
    for the raw f16 bit patterns that headwater's module returns; same bytes either way).
    """

    def __init__(self, db_path, rank=0, world_size=1, split_ratios=(0.8, 0.1, 0.1), split_seed=123, seed=42,
                 num_prefetch=3, default_batch_size=32, default_sequence_length=1024, bfs_child_width=16,
                 max_rows_per_seq=200, *, threads=None, emit_categorical_range=False, f16_dtype="float16"):
        self._jsampler = None
        self._finalizer = None
        if f16_dtype not in _F16_DTYPES:
            raise SamplerConfigError(f"f16_dtype must be 'float16' or 'uint16', got {f16_dtype!r}")
        self._f16 = _F16_DTYPES[f16_dtype]
        try:
            train, val, test = (float(x) for x in split_ratios)
        except (TypeError, ValueError):
            raise SamplerConfigError(
                f"Failed to create sampler: split_ratios must be three numbers, got {split_ratios!r}") from None
        start_jvm()
        _lifecycle.register_exit_hook()  # also when the JVM was started by someone else
        J = _J.load()
        try:
            b = J.SamplerConfig.builder()
            b.rank(_u32("rank", rank), _u32("world_size", world_size))
            b.splitRatios(train, val, test)
            b.splitSeed(_u64("split_seed", split_seed)).seed(_u64("seed", seed))
            b.numPrefetch(_u32("num_prefetch", num_prefetch))
            b.batchSize(_u32("default_batch_size", default_batch_size))
            b.sequenceLength(_u32("default_sequence_length", default_sequence_length))
            b.bfsChildWidth(_u32("bfs_child_width", bfs_child_width))
            b.maxRowsPerSeq(_u32("max_rows_per_seq", max_rows_per_seq))
            if threads is not None:
                b.threads(_u32("threads", threads))
            b.emitCategoricalRange(bool(emit_categorical_range))
            config = b.build()
        except J.IllegalArgument as e:
            raise SamplerConfigError(f"Failed to create sampler: {e.getMessage()}") from None
        path = os.fspath(db_path)
        try:
            jsampler = J.Sampler.open(J.Paths.get(path), config)
        except jpype.JException as e:
            raise SamplerError(f"Failed to create sampler: {java_message(e)}") from None
        self._jsampler = jsampler
        self._layout_lock = threading.Lock()
        self._names = None
        self._typestrs = None
        self._finalizer = weakref.finalize(self, _shutdown_java, jsampler)
        self._finalizer.atexit = False  # the exit hook below runs first, while the JVM is up
        _lifecycle.track(self)

    # -- batches ---------------------------------------------------------------------------------

    def next_train_batch(self) -> dict[str, np.ndarray]:
        """The next training batch; blocks (GIL released) until one is ready."""
        return self._next(True)

    def next_val_batch(self) -> dict[str, np.ndarray]:
        """The next validation batch (sampled with replacement); blocks (GIL released)."""
        return self._next(False)

    def _next(self, train: bool) -> dict[str, np.ndarray]:
        j = self._live_sampler()
        try:
            jbatch = j.nextTrain() if train else j.nextVal()  # JPype releases the GIL during the call
        except _J.ShutdownException:
            raise SamplerShutdown("Sampler has been shut down") from None
        except jpype.JException as e:
            raise SamplerError.from_java(e) from None
        try:
            return self._wrap(jbatch)
        except BaseException:
            jbatch.close()
            raise

    def _wrap(self, jbatch) -> dict[str, np.ndarray]:
        J = _J
        if self._names is None:
            with self._layout_lock:
                if self._names is None:
                    dtypes = [str(d) for d in J.NumpyBinding.dtypes(jbatch)]
                    self._typestrs = [self._f16 if d == "F16" else _TYPESTR[d] for d in dtypes]
                    self._names = [str(n) for n in J.NumpyBinding.names(jbatch)]
        desc = np.asarray(J.NumpyBinding.describe(jbatch)).tolist()
        owner = _BatchOwner()
        fin = weakref.finalize(owner, _close_batch, jbatch)
        fin.atexit = False
        out = {}
        i = 0
        for name, typestr in zip(self._names, self._typestrs):
            address, ndim = desc[i], desc[i + 2]
            shape = tuple(desc[i + 3:i + 3 + ndim])
            i += 3 + ndim
            out[name] = _view(address, shape, typestr, owner)
        return out

    # -- tables and metadata -----------------------------------------------------------------------

    def column_embeddings(self) -> np.ndarray:
        """``[C, 256]`` column-name embeddings (f16), a copy owned by numpy."""
        return self._embeddings(self._live_sampler().database().columnEmbeddings())

    def categorical_embeddings(self) -> np.ndarray:
        """``[Vc, 256]`` categorical embeddings (f16), a copy owned by numpy."""
        return self._embeddings(self._live_sampler().database().categoricalEmbeddings())

    def _embeddings(self, table) -> np.ndarray:
        # A copy, as headwater returns: the mapping is closed by shutdown(), the copy lives on. The JVM
        # copies (EmbeddingTable.copyTo) into numpy's memory: a page the file lost to a truncation is then
        # a SamplerError naming the file. numpy reading the mapping itself would die by SIGBUS.
        out = np.empty((int(table.rows()), _EMBEDDING_DIM), dtype=np.dtype(self._f16))
        if out.size:
            try:
                table.copyTo(_J.MemorySegment.ofBuffer(jpype.nio.convertToDirectBuffer(out)))
            except jpype.JException as e:
                raise SamplerError.from_java(e) from None
        return out

    def database_metadata(self) -> dict:
        """The summary headwater returns: table/column/task counts, global timestamp stats, task names."""
        md = self._live_sampler().database().metadata()
        return {
            "num_tables": int(md.tables().size()),
            "num_columns": int(md.columns().size()),
            "num_tasks": int(md.tasks().size()),
            "global_ts_mean_us": float(md.globalTsMeanUs()),
            "global_ts_std_us": float(md.globalTsStdUs()),
            "task_names": [str(n) for n in md.taskNames()],
        }

    # -- lifecycle --------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stops the producers and joins them (GIL released); idempotent. Batches already returned
        stay valid; their memory is freed when their last array is gone."""
        # detach(), not calling the finalizer: at interpreter exit weakref.finalize stops running
        # callbacks before our exit hook gets here.
        if self._finalizer is not None and self._finalizer.detach() is not None:
            _shutdown_java(self._jsampler)
        _lifecycle.untrack(self)

    @property
    def java_sampler(self):
        """The underlying Java ``Sampler`` (for diagnostics, e.g. ``buffersCreated()``)."""
        return self._live_sampler()

    def _live_sampler(self):
        if self._finalizer is None or not self._finalizer.alive:
            raise SamplerShutdown("Sampler has been shut down")
        return self._jsampler

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()
        return False

    def __repr__(self):
        state = "running" if self._finalizer is not None and self._finalizer.alive else "shut down"
        return f"<safetensors_jvm_sampler.Sampler {state}>"


def generate_synthetic_database(path, rows: int, seed: int = 0, embeddings: str = "random_unit") -> dict:
    """Writes the Java generator's synthetic database (4 tables, every stype, 3 tasks) into ``path``,
    which must not exist. ``embeddings``: ``"random_unit"`` or ``"zero"``. Returns its summary."""
    start_jvm()
    J = _J.load()
    kinds = {"random_unit": "RANDOM_UNIT", "zero": "ZERO"}
    if embeddings not in kinds:
        raise ValueError(f"embeddings must be 'random_unit' or 'zero', got {embeddings!r}")
    kind = jpype.JClass(f"{_PKG}.synth.SyntheticDatabase$Embeddings").valueOf(kinds[embeddings])
    try:
        s = J.Synthetic.generate(J.Paths.get(os.fspath(path)), int(rows), int(seed), kind)
    except jpype.JException as e:
        raise SamplerError(java_message(e)) from None
    return {"dir": str(s.dir()), "rows": int(s.rows()), "edges": int(s.edges()), "columns": int(s.columns()),
            "tasks": int(s.tasks()), "categorical_rows": int(s.categoricalRows()), "text_rows": int(s.textRows())}
