"""The package's modules import each other in one direction only (no cycles)."""

import ast
from pathlib import Path

import safetensors_jvm_sampler

PACKAGE = Path(safetensors_jvm_sampler.__file__).parent


def internal_imports(path: Path) -> set[str]:
    """Sibling modules a module imports, anywhere in it (function-level imports count too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
    return names


def test_module_imports_form_no_cycle():
    graph = {p.stem: internal_imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError(f"import cycle: {' -> '.join(path[path.index(module):] + [module])}")
        if module in done:
            return
        path.append(module)
        for dep in sorted(graph.get(module, ())):
            visit(dep)
        path.pop()
        done.add(module)

    assert graph, PACKAGE
    for module in sorted(graph):
        visit(module)
