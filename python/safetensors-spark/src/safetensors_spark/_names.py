"""How a dataset names its tensors and its files (``format/dataset.md``), read back.

The same rules as the JVM's ``dataset.TensorNames`` and ``dataset.DatasetLayout.relativePath``;
the shared vectors under ``format/vectors/dataset/`` prove both (``tests/test_shared_vectors.py``).
"""

from __future__ import annotations

import re

LEGACY_KV_SEPARATOR = "/"  # kv datasets written before kv_separator was recorded: <key>/<column>
_SCHEME = re.compile(r"[^/]*:")  # a colon before the first slash: file:, s3a:, C:


def parse_kv(name: str, columns: list, separator: str | None) -> tuple | None:
    """(key, column) of a kv tensor ``<key><separator><column>``, or None when it is no tensor of ``columns``.

    ``separator`` None: a dataset of an earlier version (the bare key for one column, else ``<key>/<column>``).
    """
    if separator is None:
        if len(columns) == 1:
            return name, columns[0]
        separator = LEGACY_KV_SEPARATOR
    for c in columns:
        cut = len(name) - len(c) - len(separator)
        if cut >= 0 and name.endswith(c) and name.startswith(separator, cut):
            return name[:cut], c
    return None


def parse_batch(name: str, columns: list) -> tuple | None:
    """(column, batch index in the file) of a batch tensor, or None: a column's name is the file's
    only batch; ``<column>/<batch>`` is batch ``batch`` of a packed file."""
    if name in columns:
        return name, 0
    slash = name.rfind("/")
    if slash <= 0 or slash == len(name) - 1:
        return None
    column, digits = name[:slash], name[slash + 1:]
    if column not in columns or not digits.isascii() or not digits.isdigit():
        return None
    return column, int(digits)


class PathOutsideRoot(ValueError):
    """A path a manifest names leaves the dataset root (rule PATH_OUTSIDE_ROOT)."""


def relative_path(path: str) -> str:
    """A path a manifest names, normalised relative to the dataset root (``./part-1`` is ``part-1``).

    Raises ``PathOutsideRoot`` for an empty or absolute path, one with a scheme or a backslash, a
    ``..`` segment, or the root itself.
    """
    why = None
    if not path:
        why = "an empty path"
    elif path.startswith("/"):
        why = "an absolute path"
    elif _SCHEME.match(path):
        why = "a path with a scheme"
    elif "\\" in path:
        why = "a path with a backslash"
    segments = []
    if why is None:
        for s in path.split("/"):
            if s == "..":
                why = "a path with a '..' segment"
                break
            if s not in ("", "."):
                segments.append(s)
        if why is None and not segments:
            why = "a path naming the root itself"
    if why is not None:
        raise PathOutsideRoot(f'{why}: "{path}"')
    return "/".join(segments)
