"""The Python alternatives a user would run against the same S3 endpoint, for bench/loader.

- whole file: s3fs ``cat_file`` of each shard, then Hugging Face ``safetensors.deserialize`` of the bytes;
- per tensor: the header in two ranged reads (8 bytes, then N), then one ranged ``cat_file`` per tensor.

Every load is checked byte for byte against the local shards (outside the timing). Request counts are
by construction (s3fs does not count them): a whole-file ``cat_file`` asks for the size (one HEAD) and,
for objects over ``default_block_size`` with ``max_concurrency`` > 1, fetches blocks concurrently (one
GET each); the per-tensor loop is 2 GETs per header plus one per non-empty tensor.
"""
import argparse
import json
import struct
import time
from pathlib import Path

import s3fs
import safetensors


def header(raw8, read):
    n = struct.unpack("<Q", raw8)[0]
    return n, json.loads(read(8, 8 + n))


def local_tensors(path):
    data = Path(path).read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    h = json.loads(data[8:8 + n])
    h.pop("__metadata__", None)
    return {k: data[8 + n + v["data_offsets"][0]: 8 + n + v["data_offsets"][1]] for k, v in h.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--local", required=True)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("shards", nargs="+")
    a = ap.parse_args()
    fs = s3fs.S3FileSystem(key=a.key, secret=a.secret, client_kwargs={"endpoint_url": a.endpoint,
                                                                      "region_name": "us-east-1"},
                           use_listings_cache=False)
    expected = {}
    for s in a.shards:
        expected.update(local_tensors(Path(a.local) / s))
    total = sum(len(v) for v in expected.values())
    block = fs.default_block_size
    whole_gets = 0
    for s in a.shards:
        size = (Path(a.local) / s).stat().st_size
        whole_gets += -(-size // block) if fs.max_concurrency > 1 and size > block else 1
    runs = []
    for rep in range(1, a.repeats + 1):
        # Whole file, then HF safetensors parses it.
        t0 = time.perf_counter()
        got = {}
        for s in a.shards:
            data = fs.cat_file(f"{a.bucket}/{a.prefix}/{s}")
            for name, t in safetensors.deserialize(data):
                got[name] = bytes(t["data"])
        secs = time.perf_counter() - t0
        assert got == expected, "whole-file load differs from the local shards"
        runs.append({"variant": "python: s3fs whole file + safetensors", "rep": rep, "gets": whole_gets,
                     "heads": len(a.shards),
                     "seconds": secs, "mb_per_s": total / 1e6 / secs})
        print(f"{runs[-1]['variant']:<40} {rep:3d} {runs[-1]['gets']:8d} {secs:9.2f} {total / 1e6 / secs:8.1f}",
              flush=True)
        del got, data
        # One ranged read per tensor.
        t0 = time.perf_counter()
        got = {}
        gets = 0
        for s in a.shards:
            path = f"{a.bucket}/{a.prefix}/{s}"
            n, h = header(fs.cat_file(path, start=0, end=8), lambda b, e: fs.cat_file(path, start=b, end=e))
            gets += 2
            h.pop("__metadata__", None)
            for name, v in sorted(h.items(), key=lambda kv: kv[1]["data_offsets"][0]):
                b, e = v["data_offsets"]
                if e > b:
                    got[name] = fs.cat_file(path, start=8 + n + b, end=8 + n + e)
                    gets += 1
                else:
                    got[name] = b""
        secs = time.perf_counter() - t0
        assert got == expected, "per-tensor load differs from the local shards"
        runs.append({"variant": "python: s3fs per-tensor ranged reads", "rep": rep, "gets": gets, "heads": 0,
                     "seconds": secs, "mb_per_s": total / 1e6 / secs})
        print(f"{runs[-1]['variant']:<40} {rep:3d} {gets:8d} {secs:9.2f} {total / 1e6 / secs:8.1f}", flush=True)
        del got
    Path(a.out).write_text(json.dumps(runs))


if __name__ == "__main__":
    main()
