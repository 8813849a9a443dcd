"""The Python user's tensor-parallel load, for bench/loader/run-tp.sh: what one rank writes today.

fsspec (s3fs) downloads every shard of the checkpoint whole to local disk, then Hugging Face
``safetensors`` opens each shard (``safe_open``, numpy) and cuts this rank's block with
``get_slice(name)[start:stop]`` (numpy.array_split's blocks along dimension 0; tensors the Java
rule keeps whole are read whole). Timed from the first byte requested to the last block in memory;
every rank downloads the same bytes, so rank 0 of each world size is measured. The load average is
recorded before each load.
"""
import argparse
import json
import shutil
import time
from pathlib import Path

import ml_dtypes  # noqa: F401  registers bfloat16 with numpy, which safetensors' numpy loader needs
import numpy as np
import s3fs
from safetensors import safe_open


def block(size: int, world: int, rank: int):
    base, extra = divmod(size, world)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def split_dim(shape, world: int, vectors: bool):
    """The Java TensorParallel rule of the benchmark: rank >= 2 along 0; 1-D too when `vectors`; small dims whole."""
    if len(shape) >= 2 or (vectors and len(shape) == 1):
        return 0 if shape[0] >= world else -1
    return -1


def load_rank(fs, bucket, index_key, work: Path, world: int, rank: int, vectors: bool):
    prefix = index_key.rsplit("/", 1)[0]
    shards = sorted({v for v in json.loads(fs.cat_file(f"{bucket}/{index_key}"))["weight_map"].values()})
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    downloaded = 0
    out = {}
    for shard in shards:
        local = work / shard
        fs.get(f"{bucket}/{prefix}/{shard}", str(local))
        downloaded += local.stat().st_size
        with safe_open(str(local), framework="numpy") as f:
            for name in f.keys():
                sl = f.get_slice(name)
                shape = sl.get_shape()
                if split_dim(shape, world, vectors) == 0:
                    start, stop = block(shape[0], world, rank)
                    out[name] = sl[start:stop]
                else:
                    out[name] = f.get_tensor(name)
    share = sum(np.asarray(a).nbytes for a in out.values())
    shutil.rmtree(work)
    return downloaded, share


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("checkpoints", nargs="+", help="NAME=INDEX_KEY=vectors|matrices")
    a = ap.parse_args()
    fs = s3fs.S3FileSystem(key=a.key, secret=a.secret, client_kwargs={"endpoint_url": a.endpoint,
                                                                      "region_name": "us-east-1"},
                           use_listings_cache=False)
    runs = []
    for rnd in range(1, a.rounds + 1):
        for spec in a.checkpoints:
            name, index_key, kind = spec.split("=")
            for world in (2, 4):
                load = load_average()
                t0 = time.perf_counter()
                downloaded, share = load_rank(fs, a.bucket, index_key, Path(a.work), world, 0, kind == "vectors")
                secs = time.perf_counter() - t0
                runs.append({"checkpoint": name, "how": "python: fsspec download + get_slice", "world": world,
                             "rank": 0, "round": rnd, "load_avg": load, "seconds": secs, "read_bytes": downloaded,
                             "share_bytes": share, "ratio": downloaded / share})
                print(f"{name:<28} python {world:2d}    0 {downloaded / 1e6:10.1f} {share / 1e6:10.1f}"
                      f" {downloaded / share:7.3f} {secs:8.2f}  {load}", flush=True)
    Path(a.out).write_text(json.dumps(runs))


if __name__ == "__main__":
    main()
