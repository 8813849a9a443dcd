"""Run by the clean-room test inside a fresh venv holding only the sampler wheel and what it
declares: headwater's own first lines on headwater's tiny fixture, batches saved for comparison.
Usage: python sample_headwater.py <db> <out-dir>"""

import sys
from pathlib import Path

import numpy as np

import safetensors_jvm_sampler as headwater

db, out = sys.argv[1], Path(sys.argv[2])
print("jvm:", headwater.java_runtime())
print("jar:", headwater.find_sampler_jar())
sampler = headwater.Sampler(db_path=db, default_batch_size=4, default_sequence_length=256, max_rows_per_seq=64)
for split, count in (("train", 4), ("val", 2)):
    for n in range(count):
        batch = sampler.next_train_batch() if split == "train" else sampler.next_val_batch()
        np.savez(out / f"{split}-{n:05d}.npz", **batch)
sampler.shutdown()
print("batches: 4 train, 2 val")
