"""Summarise `jfr print --events jdk.ExecutionSample` output: the most frequent top frames and the
most frequent frames anywhere on the sampled stacks (inclusive), as counts and shares."""
import collections
import re
import sys

FRAME = re.compile(r"^\s+([\w$.<>/\[\]]+)\(.*line:")


def main(path: str, top: int = 25) -> None:
    leaf = collections.Counter()
    inclusive = collections.Counter()
    samples = 0
    stack: list[str] = []
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("jdk.ExecutionSample"):
            if stack:
                samples += 1
                leaf[stack[0]] += 1
                for f in set(stack):
                    inclusive[f] += 1
            stack = []
            continue
        m = FRAME.match(line)
        if m:
            stack.append(m.group(1))
    if stack:
        samples += 1
        leaf[stack[0]] += 1
        for f in set(stack):
            inclusive[f] += 1
    print(f"{samples} execution samples (stacks truncated at JFR's depth)")
    print("\ntop frames (self):")
    for f, n in leaf.most_common(top):
        print(f"  {n:6d} {100 * n / samples:5.1f}%  {f}")
    print("\nframes on the stack (inclusive):")
    for f, n in inclusive.most_common(top):
        print(f"  {n:6d} {100 * n / samples:5.1f}%  {f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
