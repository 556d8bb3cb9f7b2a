"""The house rules of docs/ARCHITECTURE.md, checked on the source (an `ast` walk, nothing
imported): dependencies point one way (`tools` -> `lowering` -> `passes` -> `dialect`,
and the model imports neither the IR nor xDSL), no two modules import each other, not
even through a chain or for type checking only, every package folder is installed, and
no module grows past the size of one room."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("dan.dialect", "dan.passes", "dan.lowering", "dan.tools")
"""Lowest first: a module may import its own layer and the ones before it."""
ROOM_LINES = 400


def _config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    out: dict[str, Path] = {}
    for package, folder in _config()["tool"]["setuptools"]["package-dir"].items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Per module, the package modules it imports anywhere (type-checking blocks and
    function bodies included); `from a import b` counts `a.b` when that is a module."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _external(path: Path) -> set[str]:
    """Top-level names of the packages outside this project a module imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def _layer(module: str) -> int:
    return next(i for i, p in enumerate(LAYERS) if module == p or module.startswith(p + "."))


def test_dependencies_point_one_way() -> None:
    modules = _modules()
    upward = [
        f"{a} -> {b}" for a, deps in sorted(_imports(modules).items()) for b in sorted(deps) if _layer(b) > _layer(a)
    ]
    assert upward == []


def test_the_model_imports_neither_the_ir_nor_xdsl() -> None:
    modules = _modules()
    graph = _imports(modules)
    model = [m for m in modules if m.startswith("dan.dialect.model")]
    assert model
    assert [f"{m} -> {d}" for m in model for d in sorted(graph[m]) if d.startswith("dan.dialect.ir")] == []
    assert [m for m in model if "xdsl" in _external(modules[m])] == []


def test_no_import_cycle() -> None:
    graph = _imports(_modules())
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(path[path.index(d):] + [d])
            elif d not in state:
                visit(d, path)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    assert cycles == []


def test_every_package_folder_is_installed() -> None:
    listed = set(_config()["tool"]["setuptools"]["packages"])
    packages = {m for m, p in _modules().items() if p.name == "__init__.py"}
    assert packages == listed


def test_no_room_over_its_size() -> None:
    over = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > ROOM_LINES}
    assert over == {}


def test_a_prefix_three_files_share_is_a_folder() -> None:
    """(The commands are named after themselves: `dan_opt.py` is `dan-opt`.)"""
    crowded: list[str] = []
    for folder in {p.parent for p in _modules().values()}:
        stems = [p.stem for p in folder.glob("*.py") if "_" in p.stem and p.stem != "__init__"]
        if folder == ROOT / "tools":
            stems = [s for s in stems if not s.startswith("dan_")]
        prefixes = [s.split("_")[0] for s in stems]
        crowded += [f"{folder.relative_to(ROOT)}/{x}_*" for x in sorted(set(prefixes)) if prefixes.count(x) >= 3]
    assert crowded == []
