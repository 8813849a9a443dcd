"""Memory safety: a batch's memory goes back to the pool only when no array over it remains."""

import collections
import gc

import jpype
import numpy as np

import safetensors_jvm_sampler as hw

SMALL = dict(default_batch_size=2, default_sequence_length=64, max_rows_per_seq=16)


def java_gc():
    gc.collect()
    jpype.JClass("java.lang.System").gc()


def derived_view(arr: np.ndarray, pick: int) -> np.ndarray:
    """Different kinds of views: slices, strided, reshaped, transposed, the array itself."""
    if arr.size == 0:
        return arr
    kind = pick % 5
    if kind == 0 or arr.ndim == 1:
        return arr
    if kind == 1:
        return arr[arr.shape[0] // 2:]
    if kind == 2:
        return arr[..., ::3]
    if kind == 3:
        return arr.reshape(-1)[5:]
    return arr.T


def test_views_survive_thousands_of_batches_and_gcs(headwater_db):
    rng = np.random.default_rng(1)
    held = collections.deque()
    checks = 0

    def verify():
        nonlocal checks
        for key, view, copy in held:
            np.testing.assert_array_equal(view, copy, err_msg=key)
            checks += 1

    with hw.Sampler(headwater_db, **SMALL) as sampler:
        for i in range(3000):
            batch = sampler.next_train_batch() if i % 5 else sampler.next_val_batch()
            if rng.random() < 0.3:
                key = list(batch)[rng.integers(len(batch))]
                view = derived_view(batch[key], int(rng.integers(5)))
                held.append((key, view, np.array(view, copy=True)))
                if len(held) > 40:
                    held.popleft()
            del batch
            if i % 200 == 0:
                java_gc()
                verify()
        java_gc()
        verify()
        created = sampler.java_sampler.buffersCreated()
    assert checks > 500
    # Memory did go back: 3000 batches used a bounded number of buffer sets (held + prefetched + built).
    assert created < 70, created


def test_memory_returns_to_the_pool_only_after_the_last_view(headwater_db):
    with hw.Sampler(headwater_db, num_prefetch=1, **SMALL) as sampler:
        first = sampler.next_train_batch()
        ptr = first["numeric_values"].ctypes.data
        kept = first["numeric_values"][1]  # one row of one tensor pins the whole batch
        copy = kept.copy()
        del first
        java_gc()
        seen = set()
        for _ in range(60):
            b = sampler.next_train_batch()
            seen.add(b["numeric_values"].ctypes.data)
            del b
        assert ptr not in seen  # never reused while `kept` is alive
        np.testing.assert_array_equal(kept, copy)
        del kept
        gc.collect()
        # Later batches are held, not dropped: the pool hands out idle sets (the last returned first)
        # before it creates one, so the released set is among the next few. Dropping each batch at
        # once instead let two other sets cycle in front of it, depending on thread timing.
        held = [sampler.next_train_batch() for _ in range(12)]
        assert ptr in {b["numeric_values"].ctypes.data for b in held}  # back in the pool and reused


def test_batches_outlive_shutdown(headwater_db):
    sampler = hw.Sampler(headwater_db, **SMALL)
    batch = sampler.next_train_batch()
    copies = {k: v.copy() for k, v in batch.items()}
    sampler.shutdown()
    java_gc()
    for key, arr in batch.items():
        np.testing.assert_array_equal(arr, copies[key], err_msg=key)
    del batch  # freed now (the pool is closed), without a crash
    gc.collect()
