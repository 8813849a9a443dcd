"""The JAX example loop trains on sampler batches; jax arrays aliasing batch memory stay valid."""

import gc
import importlib.util
from pathlib import Path

import jax
import jpype
import numpy as np
import pytest

import safetensors_jvm_sampler as hw

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "jax_train.py"


def load_example():
    spec = importlib.util.spec_from_file_location("jax_train", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_loop_loss_is_finite_and_decreasing(synth_db):
    example = load_example()
    with hw.Sampler(synth_db, default_batch_size=16, default_sequence_length=128, max_rows_per_seq=32) as sampler:
        losses, val_losses = example.train(sampler, steps=48, eval_interval=16, num_val_steps=2, log=lambda _: None)
    assert len(losses) == 48 and len(val_losses) == 4
    assert np.all(np.isfinite(losses)) and np.all(np.isfinite(val_losses))
    first, last = np.mean(losses[:12]), np.mean(losses[-12:])
    assert last < 0.9 * first, (first, last, losses)


def test_jax_arrays_aliasing_batches_stay_valid(headwater_db):
    system = jpype.JClass("java.lang.System")
    kept = []
    aliased = 0
    with hw.Sampler(headwater_db, default_batch_size=2, default_sequence_length=64, max_rows_per_seq=16) as s:
        for i in range(400):
            batch = s.next_train_batch()
            if i % 25 == 0:
                pointers = {k: v.ctypes.data for k, v in batch.items() if v.size}
                device = jax.device_put(batch)
                aliased += sum(device[k].unsafe_buffer_pointer() == p for k, p in pointers.items())
                kept.append((device, {k: v.copy() for k, v in batch.items()}))
            del batch
            if i % 50 == 0:
                gc.collect()
                system.gc()
        gc.collect()
        for device, copies in kept:
            for key, want in copies.items():
                np.testing.assert_array_equal(np.asarray(device[key]), want, err_msg=key)
    print(f"{aliased} jax arrays aliased sampler memory (zero-copy device_put)")


@pytest.mark.skipif(importlib.util.find_spec("headwater") is None, reason="headwater's Python module is not installed")
def test_same_batches_as_headwaters_module(headwater_db):
    import headwater

    kwargs = dict(default_batch_size=4, default_sequence_length=256, max_rows_per_seq=64, seed=42)
    theirs = headwater.Sampler(str(headwater_db), **kwargs)
    ours = hw.Sampler(headwater_db, f16_dtype="uint16", **kwargs)
    try:
        for pull in ("next_train_batch", "next_train_batch", "next_val_batch"):
            a, b = getattr(theirs, pull)(), getattr(ours, pull)()
            assert list(a) == list(b)
            for key in a:
                assert a[key].dtype == b[key].dtype and a[key].tobytes() == b[key].tobytes(), key
    finally:
        theirs.shutdown()
        ours.shutdown()
