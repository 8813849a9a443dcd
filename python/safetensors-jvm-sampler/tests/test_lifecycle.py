"""Lifecycle: shutdown, errors with the Java message, the GIL, interpreter exit."""

import subprocess
import sys
import textwrap
import threading
import time

import pytest

import safetensors_jvm_sampler as hw

SMALL = dict(default_batch_size=2, default_sequence_length=64, max_rows_per_seq=16)


def test_after_shutdown_every_method_raises_sampler_shutdown(headwater_db):
    sampler = hw.Sampler(headwater_db, **SMALL)
    sampler.next_train_batch()
    sampler.shutdown()
    sampler.shutdown()  # idempotent
    for call in (sampler.next_train_batch, sampler.next_val_batch, sampler.column_embeddings,
                 sampler.categorical_embeddings, sampler.database_metadata):
        with pytest.raises(hw.SamplerShutdown, match="shut down"):
            call()
    assert issubclass(hw.SamplerShutdown, RuntimeError)  # what headwater raises


def test_shutdown_from_another_thread_wakes_a_blocked_consumer(synth_db):
    # Big batches, no prefetch: next_train_batch() blocks in Java (GIL released), so the other
    # thread can run and shut the sampler down under it.
    sampler = hw.Sampler(synth_db, num_prefetch=0, default_batch_size=64, threads=1)
    errors = []

    def consume():
        try:
            while True:
                sampler.next_train_batch()
        except hw.SamplerShutdown as e:
            errors.append(e)

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    time.sleep(0.5)
    sampler.shutdown()
    t.join(30)
    assert not t.is_alive()
    assert len(errors) == 1


def test_the_gil_is_released_while_waiting_for_a_batch(synth_db):
    # A ticker thread wakes about every millisecond and needs the GIL to record the time. If the
    # GIL were held while a pull waits in Java, no stamp could fall strictly inside a wait. How long
    # a wait lasts depends on the machine, so the test counts stamps against the total wait time
    # instead of asking for waits of a given length.
    stamps = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    # Big batches, one worker, no prefetch: each pull waits for a batch to be built.
    with hw.Sampler(synth_db, num_prefetch=0, default_batch_size=128, threads=1) as sampler:
        sampler.next_train_batch()
        t = threading.Thread(target=tick, daemon=True)
        t.start()
        waits = []
        for _ in range(20):
            t0 = time.perf_counter()
            sampler.next_train_batch()
            waits.append((t0, time.perf_counter()))
        stop.set()
        t.join()
    total_ms = sum(b - a for a, b in waits) * 1000
    inside = sum(1 for s in stamps for a, b in waits if a < s < b)
    # Released: about one stamp per millisecond of waiting. Held: none. A tenth leaves room for a
    # loaded machine and still fails when the GIL is held.
    assert inside >= max(3, 0.1 * total_ms), (inside, total_ms)


def test_bad_path_names_it(tmp_path):
    missing = tmp_path / "no-such-db"
    with pytest.raises(hw.SamplerError, match="no-such-db") as info:
        hw.Sampler(missing)
    assert "Failed to create sampler" in str(info.value)


def test_corrupt_database_names_the_file(db_copy):
    graph = db_copy / "graph.bin"
    graph.write_bytes(graph.read_bytes()[:-4])
    with pytest.raises(hw.SamplerError, match="graph.bin"):
        hw.Sampler(db_copy)


def test_bad_config_is_a_value_error_with_the_java_message(headwater_db):
    with pytest.raises(hw.SamplerConfigError, match=r"rank must be in \[0, world_size=2\), got 2"):
        hw.Sampler(headwater_db, rank=2, world_size=2)
    with pytest.raises(ValueError, match="sequence_length"):
        hw.Sampler(headwater_db, default_sequence_length=70000)
    with pytest.raises(ValueError, match="split_ratios"):
        hw.Sampler(headwater_db, split_ratios=(0.8, 0.2))


EXIT_SCRIPT = textwrap.dedent("""
    import sys, threading
    import safetensors_jvm_sampler as hw
    sampler = hw.Sampler(sys.argv[1], default_batch_size=2, default_sequence_length=64, max_rows_per_seq=16)
    held = [sampler.next_train_batch() for _ in range(5)]   # views alive at exit
    view = held[0]["fk_adj"][1:]
    if sys.argv[2] == "blocked":
        # a thread blocked in a pull at exit: the exit hook's shutdown wakes it
        s2 = hw.Sampler(sys.argv[1], num_prefetch=0, default_batch_size=64)
        threading.Thread(target=lambda: [s2.next_train_batch() for _ in range(10**6)], daemon=True).start()
    print("pulled", len(held), flush=True)
    # no shutdown(): the exit hook does it
""")


SHUTDOWN_AT_EXIT = textwrap.dedent("""
    import atexit, sys
    import safetensors_jvm_sampler as hw
    def check():  # runs after the package's exit hook, before the JVM shuts down
        try:
            jsampler.nextTrain()
            print("still running at exit", flush=True)
        except Exception as e:
            print("shut down at exit:", e.getClass().getSimpleName(), flush=True)
    atexit.register(check)
    sampler = hw.Sampler(sys.argv[1], default_batch_size=2, default_sequence_length=64, max_rows_per_seq=16)
    jsampler = sampler.java_sampler
    sampler.next_train_batch()
""")


def test_shutdown_runs_at_exit(headwater_db):
    proc = subprocess.run([sys.executable, "-c", SHUTDOWN_AT_EXIT, str(headwater_db)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "shut down at exit: SamplerShutdownException" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", ["idle", "blocked"])
def test_interpreter_exit_never_hangs(headwater_db, synth_db, mode):
    db = synth_db if mode == "blocked" else headwater_db
    proc = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, str(db), mode], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "pulled 5" in proc.stdout
