"""Run by the clean-room test inside a fresh venv holding only the sampler wheel with its
'preprocess' extra: the sampler opens the database safetensors-preprocess built.
Usage: python preprocess_then_sample.py <database-dir>"""

import sys

import safetensors_jvm_sampler as headwater

sampler = headwater.Sampler(db_path=sys.argv[1], default_batch_size=4, default_sequence_length=128, max_rows_per_seq=32)
batch = sampler.next_train_batch()
info = sampler.database_metadata()
sampler.shutdown()
assert batch["numeric_values"].shape == (4, 128), batch["numeric_values"].shape
assert info["num_tables"] == 4 and info["num_tasks"] >= 1, info
print("sampled:", info["num_tables"], "tables,", info["num_tasks"], "tasks; batch keys", len(batch))
