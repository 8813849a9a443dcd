"""Database files truncated under a running sampler: a SamplerError naming the file, never a crash.

Each case runs in a child interpreter, so that a SIGBUS (it used to be one: numpy copied the mapped
embedding files outside the JVM's fault handling, exit 134 with an hs_err file) fails the test
instead of killing the session. The child runs in its own directory, where the JVM would write its
crash report. No faulthandler here or in the children: the JVM handles SIGSEGV and SIGBUS itself.
"""

import subprocess
import sys
import textwrap

import pytest

from conftest import sampler_env

DB_FILES = ["graph.bin", "tables/comments.bin", "tables/posts.bin", "tables/users.bin", "tables/votes.bin",
            "tasks/predict_has_accepted_answer.bin", "tasks/predict_num_comments_30d.bin",
            "tasks/predict_vote_type.bin", "column_embeddings.bin", "categorical_embeddings.bin",
            "text_embeddings.bin"]

EMBEDDINGS_CHILD = textwrap.dedent("""
    import os, shutil, sys
    import numpy as np
    import safetensors_jvm_sampler as hw
    src, work, length = sys.argv[1:4]
    for name in ("column_embeddings", "categorical_embeddings"):
        db = os.path.join(work, name, "db")
        shutil.copytree(src, db)
        sampler = hw.Sampler(db, default_batch_size=2, default_sequence_length=64, max_rows_per_seq=16)
        before = getattr(sampler, name)()
        path = os.path.join(db, name + ".bin")
        os.truncate(path, 0 if length == "0" else os.path.getsize(path) // 2)
        try:
            getattr(sampler, name)()
            print(name, "NO ERROR", flush=True)
        except hw.SamplerError as e:
            print(name, "SamplerError:", e, flush=True)
            print(name, "file:", e.file, flush=True)
        # The copy taken before the truncation is numpy's own: still whole.
        print(name, "copy before intact:", bool(np.isfinite(before.astype(np.float32)).all()), before.shape, flush=True)
        sampler.shutdown()
    print("CHILD DONE", flush=True)
""")

BATCHES_CHILD = textwrap.dedent("""
    import os, shutil, sys
    import safetensors_jvm_sampler as hw
    src, work, threads, length = sys.argv[1:5]
    for i, name in enumerate(sys.argv[5:]):
        db = os.path.join(work, f"round{i}", "db")
        shutil.copytree(src, db)
        with hw.Sampler(db, num_prefetch=0, threads=int(threads), default_batch_size=4,
                        default_sequence_length=256, max_rows_per_seq=64) as sampler:
            for _ in range(10):
                sampler.next_train_batch()
            path = os.path.join(db, name)
            os.truncate(path, 0 if length == "0" else os.path.getsize(path) // 2)
            try:
                for _ in range(30):
                    sampler.next_train_batch()
                print("FILE", name, "NO ERROR", flush=True)
            except hw.SamplerError as e:
                print("FILE", name, "SamplerError:", e, flush=True)
                print("FILE", name, "file:", e.file, flush=True)
    print("CHILD DONE", flush=True)
""")


def run_child(script, work, *args):
    proc = subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=work, env=sampler_env(),
                          capture_output=True, text=True, timeout=300)
    crash_reports = sorted(p.name for p in work.iterdir() if p.name.startswith("hs_err"))
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert crash_reports == [], crash_reports
    assert "CHILD DONE" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("length", ["0", "half"])
def test_truncated_embedding_files_raise_sampler_error_naming_them(headwater_db, tmp_path, length):
    out = run_child(EMBEDDINGS_CHILD, tmp_path, headwater_db, tmp_path, length)
    for name in ("column_embeddings", "categorical_embeddings"):
        line = next((l for l in out.splitlines() if l.startswith(name + " SamplerError:")), None)
        assert line is not None, out
        assert str(tmp_path / name / "db" / (name + ".bin")) in line, line
        assert "truncated" in line and "are gone" in line, line
        assert f"{name} file: {tmp_path / name / 'db' / (name + '.bin')}" in out, out
        assert f"{name} copy before intact: True" in out, out


@pytest.mark.parametrize("threads,length", [(1, "0"), (2, "half"), (4, "0")])
def test_every_file_truncated_under_a_running_sampler_is_a_sampler_error_naming_it(headwater_db, tmp_path,
                                                                                   threads, length):
    out = run_child(BATCHES_CHILD, tmp_path, headwater_db, tmp_path, threads, length, *DB_FILES)
    for i, name in enumerate(DB_FILES):
        line = next((l for l in out.splitlines() if l.startswith(f"FILE {name} ")), "")
        assert "SamplerError:" in line, out
        assert str(tmp_path / f"round{i}" / "db" / name) in line, line
        assert "the train producer failed" in line and "InternalError" not in line.split("(caused by")[0], line
        assert f"FILE {name} file: {tmp_path / f'round{i}' / 'db' / name}" in out, out
