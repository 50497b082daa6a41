"""The layers hold: every module imports only what the architecture lets it (docs/architecture.md).

The contracts are in ``pyproject.toml`` (``[tool.importlinter]``); import-linter reads every
import, function-level and type-only ones included. Here: the contracts are kept; every
module has a place in its package's layers; each module of dpsql is either the façade's or
forbidden to the front-ends; no import circle; and each kind of violation the contracts are
there to forbid, put into a copy of the package, is caught.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
FACADE = {
    "__main__", "connection", "dbapi", "statements", "listing", "owner", "evaluate", "suggest",
    "result", "explain", "errors", "catalog", "accounting", "datasets", "parse",
    "frontends",
}
"""The modules of dpsql a front-end may import (besides the package root): the façade and
the values it takes and hands out (the contract "facade" forbids all the others; __main__
and frontends are the front-ends' own)."""


def contracts(root: Path = ROOT) -> dict[str, dict]:
    """The import-linter contracts of ``root``'s pyproject.toml, by id."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def lint_imports(root: Path, *contract_ids: str) -> subprocess.CompletedProcess:
    """import-linter on the package under ``root`` (only ``contract_ids``, if given)."""
    only = [arg for c in contract_ids for arg in ("--contract", c)]
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", *only], cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
                          text=True, timeout=120)


def unplaced_modules(root: Path = ROOT) -> list[str]:
    """The modules and sub-packages of dpsql that no layers contract of their package names
    (every package, dpsql included, has one: a package without one is reported too)."""
    by_container = {c["containers"][0]: c for c in contracts(root).values()
                    if c["type"] == "layers"}
    missing = []
    for init in sorted((root / "dpsql").rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(root).parts)
        contract = by_container.get(package)
        named = set() if contract is None else {
            tail.strip().strip("()") for layer in contract["layers"] for tail in
            layer.replace(":", "|").split("|")}
        children = [p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py"]
        children += [p.name for p in init.parent.iterdir() if (p / "__init__.py").exists()]
        missing += [f"{package}.{child}" for child in sorted(children) if child not in named]
    return missing


def import_circles(package: str = "dpsql") -> list[tuple[str, ...]]:
    """Each import circle among ``package``'s modules, type-only imports included, once:
    an import ``a -> b`` is on a circle when a chain of imports leads from ``b`` back to
    ``a``. Package ``__init__`` modules count (a circle through one is no sibling circle)."""
    import grimp

    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.setdefault(frozenset(back), (importer, *back))
    return list(found.values())


def test_the_import_graph_keeps_the_contracts():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_every_module_has_a_place_in_its_packages_layers():
    assert unplaced_modules() == [], (
        "give each module a layer in its package's contract (pyproject.toml), below what it "
        "imports from its package and above what imports it")


def test_each_module_is_the_facades_or_forbidden_to_the_front_ends():
    forbidden = {m.removeprefix("dpsql.") for m in contracts()["facade"]["forbidden_modules"]}
    modules = {p.stem for p in (ROOT / "dpsql").glob("*.py") if p.name != "__init__.py"}
    modules |= {p.name for p in (ROOT / "dpsql").iterdir() if (p / "__init__.py").exists()}
    assert FACADE & forbidden == set()
    assert modules - FACADE - forbidden == set(), (
        "a new module of dpsql: forbid it to the front-ends (contract 'facade' in "
        "pyproject.toml) unless it is part of the façade (FACADE here, docs/architecture.md)")
    assert (FACADE | forbidden) - modules == set()


def test_no_import_circle_even_through_type_only_imports():
    assert import_circles() == []


VIOLATIONS = {
    "duckdb in mechanisms": ("mechanisms/noise.py", "import duckdb", ["pure-maths"]),
    "sqlglot in accounting": ("accounting/values.py", "import sqlglot", ["pure-maths"]),
    "pyarrow in accounting": ("accounting/ledger.py", "import pyarrow", ["pure-maths"]),
    "sqlglot in maths, through a lower module": ("exact.py", "import sqlglot", ["pure-maths"]),
    "a front-end imports release": ("frontends/shell.py", "from dpsql import release",
                                    ["facade"]),
    "a front-end imports the compiler": ("frontends/server/session.py",
                                         "from dpsql.compile import compile_query", ["facade"]),
    "a lower layer imports a higher": ("mechanisms/samplers.py", "import dpsql.accounting",
                                       ["layers"]),
    "two passes import each other": ("analysis/shape.py", "import dpsql.analysis.work",
                                     ["analysis"]),
    "a circle inside a sub-package": ("analysis/grammar.py", "import dpsql.analysis.shape",
                                      ["analysis", "no-circles"]),
    "a type-only circle: dbapi and connection": (
        "dbapi.py", "if TYPE_CHECKING:\n    from dpsql.connection import Connection",
        ["layers", "no-circles"]),
    "a type-only circle: plot and result": (
        "plot.py", "if TYPE_CHECKING:\n    from dpsql.result import Result",
        ["layers", "no-circles"]),
    "a builder imports another": ("rewrite/distinct.py", "import dpsql.rewrite.quantiles",
                                  ["rewrite"]),
    "pyspark outside the Spark engine": ("backends/duckdb.py", "import pyspark", ["spark"]),
    "the login reaches a connection": ("frontends/server/login.py", "import dpsql.connection",
                                       ["server-login"]),
    "a catalog probe reaches the session": ("frontends/server/pgcatalog.py",
                                            "import dpsql.frontends.server.session",
                                            ["server-probes", "server"]),
    "the probe script imports dpsql": ("frontends/server/probechild.py", "import dpsql.errors",
                                       ["probe-script"]),
}
"""Each deliberate violation: the file it goes into, the lines appended, and the contracts
it must break."""


def _copy(tmp_path: Path) -> Path:
    """The package and its pyproject.toml in ``tmp_path``."""
    shutil.copytree(ROOT / "dpsql", tmp_path / "dpsql",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def _append(path: Path, lines: str) -> None:
    path.write_text(path.read_text() + f"\nfrom typing import TYPE_CHECKING\n{lines}\n")


@pytest.mark.parametrize("case", sorted(VIOLATIONS))
def test_each_deliberate_violation_breaks_its_contract(tmp_path, case):
    file, lines, broken = VIOLATIONS[case]
    root = _copy(tmp_path)
    _append(root / "dpsql" / file, lines)
    for contract in broken:
        done = lint_imports(root, contract)
        assert done.returncode != 0 and "0 kept, 1 broken" in done.stdout, (
            contract, done.stdout[-3000:], done.stderr[-2000:])


@pytest.mark.parametrize("new", ["helpers.py", "rewrite/by_window.py", "frontends/server/x.py"])
def test_a_module_in_no_layer_breaks_the_contracts(tmp_path, new):
    root = _copy(tmp_path)
    (root / "dpsql" / new).write_text('"""A new module nobody placed."""\n')
    assert unplaced_modules(root) == [f"dpsql.{new.removesuffix('.py').replace('/', '.')}"]
    done = lint_imports(root)
    assert done.returncode != 0 and "The following modules are not listed as layers" in \
        done.stdout, done.stdout[-3000:]


def _circles_in(root: Path) -> str:
    """``import_circles`` run where ``dpsql`` is the copy under ``root``."""
    script = (f"import runpy; found = runpy.run_path({str(Path(__file__))!r})"
              "['import_circles'](); print(found)")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize(("file", "lines"), [
    ("plot.py", "if TYPE_CHECKING:\n    from dpsql.result import Result"),
    # A circle through a package's __init__ is no circle among its children: the contract
    # "no-circles" does not see it.
    ("accounting/values.py", "if TYPE_CHECKING:\n    from dpsql.accounting import Budget"),
])
def test_the_circle_check_sees_type_only_circles(tmp_path, file, lines):
    root = _copy(tmp_path)
    assert _circles_in(root) == "[]"
    _append(root / "dpsql" / file, lines)
    module = "dpsql." + file.removesuffix(".py").replace("/", ".")
    assert module in _circles_in(root)


LONGEST_FUNCTION = 60
"""Lines a function of ``dpsql/`` may span, ``def`` to its last line, docstring included
(STYLE.md: small passes). A longer one is split into named steps that read top to bottom."""
STILL_LONG: set[tuple[str, str]] = set()
"""(file, function) allowed over the limit while it is being split: none."""


def test_no_function_in_dpsql_is_longer_than_sixty_lines():
    import ast  # here, not above: this test stands apart from the import-graph ones

    long, pending = [], dict.fromkeys(STILL_LONG, 0)
    for path in sorted((ROOT / "dpsql").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), name)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines = node.end_lineno - node.lineno + 1
            if (name, node.name) in pending:
                pending[(name, node.name)] = max(pending[(name, node.name)], lines)
            elif lines > LONGEST_FUNCTION:
                long.append(f"{name}:{node.lineno} {node.name}() is {lines} lines")
    assert not long, (
        f"functions over {LONGEST_FUNCTION} lines: {'; '.join(long)}. Split each into named "
        "steps (a helper per clause, check or pass), or move a long derivation to docs/")
    done = sorted(f"{name} {function}()" for (name, function), lines in pending.items()
                  if lines <= LONGEST_FUNCTION)
    assert not done, (f"{', '.join(done)}: no longer over {LONGEST_FUNCTION} lines (or gone); "
                      "delete its entry from STILL_LONG in tests/test_architecture.py")
