"""The code blocks of README.md and docs/*.md, and what each language's check needs from them.

A guide may carry hidden set-up code for its snippets in an HTML comment, `<!-- snippet-setup java`
or `<!-- snippet-setup python` ... `-->`: variables and files a reader would already have (a
SparkSession, a DataFrame, a model file); `<!-- snippet-setup java 2` is for the guide's second Java
block only. The snippets themselves are checked as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```([\w-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
SETUP = re.compile(r"<!-- snippet-setup (\w+)(?: (\d+))?\n(.*?)^-->", re.S | re.M)


@dataclass(frozen=True)
class Snippet:
    doc: Path
    line: int
    lang: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def snippets(doc: Path) -> list[Snippet]:
    text = doc.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        lang = m.group(1) or "bash"  # an untagged block is a command line
        out.append(Snippet(doc, text.count("\n", 0, m.start()) + 1, lang, m.group(2)))
    return out


def setup(doc: Path, lang: str, block: int | None = None) -> str:
    """The set-up for the guide's ``block``-th block of ``lang`` (1-based): the set-up for all its
    blocks, then the one for that block."""
    found = [m for m in SETUP.finditer(doc.read_text(encoding="utf-8")) if m.group(1) == lang]
    return "\n".join(m.group(3) for m in found if m.group(2) is None or (block is not None and int(m.group(2)) == block))


def all_snippets(lang: str | None = None) -> list[Snippet]:
    return [s for d in docs() for s in snippets(d) if lang is None or s.lang == lang]


def commands(code: str) -> list[str]:
    """The command lines of a shell block: continuations joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            out.append(line)
    return out
