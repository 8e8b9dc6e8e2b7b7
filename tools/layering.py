"""The layering check: every lamina package imports only what DESIGN.md's layer table allows,
and follows the import rules below (no import cycles, no lazy sibling imports, declared
third-party dependencies, no other layer's private names).

Run it as ``uv run python tools/layering.py [REPO_ROOT]``: it checks every rule below, prints
one line per violation and a summary line, and exits 1; or prints a one-line summary and exits
0. ``--report`` prints the measurement instead: every violation grouped by kind and package,
with counts, and exits 0. Tests import it and call ``check``.

What it reads:

* every package's ``pyproject.toml`` (the root meta-package ``lamina`` and ``packages/*``),
  for what it declares: ``[project].dependencies`` (lamina layers and third-party
  distributions), ``[project.optional-dependencies]`` and ``[dependency-groups]``;
* every ``.py`` file of every package (a layer's whole folder: ``src/``, ``tests/``, ...;
  the root's ``src/``, ``tests/``, ``examples/``, ``benchmarks/``), for the lamina layers
  it imports. It finds ``import lamina.x``, ``from lamina.x import y``,
  ``from lamina import x``, relative imports, imports nested anywhere (functions,
  classes, ``if``, ``try``), ``importlib.import_module`` / ``__import__`` /
  ``pytest.importorskip`` called with literal names, and ``lamina.x`` attribute use in a
  file that binds the name ``lamina`` with ``import lamina.y``.

What it reports (``Violation.kind``):

* ``undeclared``: a package imports a lamina layer it does not declare;
* ``meta``: a layer imports (or declares) the meta-package ``lamina`` itself;
* ``table``: a declared dependency that DESIGN.md's table does not allow, or an unknown layer;
* ``cycle``: the declared dependencies form a cycle;
* ``jaxlib``: ``lamina-ir`` declares or imports jaxlib (it must install without it);
* ``jax``: a package declares or imports ``jax`` (JAX is not a dependency);
* ``package``: a folder under ``packages/`` that is not a layer of the table;
* ``syntax``: a file that cannot be parsed, so cannot be checked;
* ``internal-cycle``: module-level imports between the modules of one package's ``src/``
  form a cycle. Module level means run when the module is imported: at the top, inside
  top-level ``if``/``try``/``with`` and class bodies, but not in ``def``/``lambda`` bodies
  nor under ``if TYPE_CHECKING:``. An import of ``p.q.m`` runs ``p.q.m`` and the packages
  above it that are not already being imported (those above the importer itself), so a
  package's ``__init__`` importing its submodules is fine, while a submodule importing its
  own package (``from lamina.lax import x`` in ``lamina/lax/foo.py``) closes a loop. Each
  cycle is reported once, at its first import, naming the whole loop;
* ``local-import``: a module under ``src/`` imports lamina inside a function, at any
  depth: a module of its own package (a lazy import, usually dodging a cycle) or, in a
  layer, a lower layer (always loaded first, so nothing is gained). Inside functions a
  package may import third-party modules and, in the root meta-package only, layers
  (lazy loading of the public API); tests may import lazily;
* ``third-party``: a file under ``src/`` or ``tests/`` imports a third-party module whose
  distribution its package does not declare itself (a lamina layer's dependencies do not
  count): ``src/`` needs ``[project].dependencies``, or an optional-dependencies extra for
  an import inside a function or a ``try`` that handles ``ImportError``; ``tests/`` may also
  use ``[dependency-groups]`` and pytest. The root's ``benchmarks/`` and ``examples/`` are
  exempt; the standard library and the tests' own helper modules are not third-party;
* ``private``: a file under ``src/`` or ``tests/`` imports a private name of another layer:
  one with a component after ``lamina.<layer>`` starting with ``_`` (not a dunder), e.g.
  ``lamina.lax._common`` or ``from lamina.lax.conversion import _convert_element_type``.
  The root meta-package counts as another layer; inside a layer private names are fine;
* ``internal``: a file under ``src/`` or ``tests/`` reaches into another layer's modules
  (``from lamina.lax.shapes import reshape``, ``import lamina.interpreters.jit``) instead of
  going through the layer's package namespace (``from lamina.lax import reshape``) or one of
  its public modules (``PUBLIC_MODULES``), so a layer may rearrange its modules freely.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# DESIGN.md's layer table: the lamina layers each layer may import directly. A layer may
# also declare and import anything those layers may use (the closure downward).
ALLOWED: dict[str, tuple[str, ...]] = {
    "ir": (),
    "interpreters": ("ir",),
    "lax": ("interpreters", "ir"),
    "numpy": ("lax",),
    "random": ("numpy", "lax"),
    "scipy": ("numpy", "lax"),
    "nn": ("random", "numpy", "lax"),
    "sharding": ("interpreters", "lax"),
    "export": ("interpreters", "lax", "sharding"),
    "pallas": ("numpy", "lax"),
    "profiler": ("interpreters",),
}
LAYERS = tuple(ALLOWED)
META = "lamina"  # the root meta-package; it may declare and import every layer

# Folders of the root package that are scanned; "benchmarks" may import jax, because
# DESIGN.md's benchmark targets are ratios against JAX measured in the same run.
ROOT_DIRS = ("src", "tests", "examples", "benchmarks")
JAX_ALLOWED_ROOT_DIRS = ("benchmarks",)
SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}  # and every ".hidden" folder

# The modules of a layer that other layers may import by path, besides the layer's package
# itself: the ones that mirror a public module of JAX's, and the test helpers.
PUBLIC_MODULES: dict[str, tuple[str, ...]] = {
    "ir": ("lamina.ir.dtypes", "lamina.ir.tree", "lamina.ir.tree_util"),
    "interpreters": tuple(
        f"lamina.interpreters.{m}"
        for m in ("ad", "batching", "mlir", "partial_eval", "pxla", "test_util", "xla")
    ),
    "lax": ("lamina.lax.linalg",),
    "numpy": ("lamina.numpy.fft", "lamina.numpy.linalg"),
    "nn": ("lamina.nn.initializers",),
    "pallas": ("lamina.pallas.triton",),
    "sharding": tuple(
        f"lamina.sharding.{m}" for m in ("distributed", "mesh_utils", "multihost_utils")
    ),
}

# Calls whose literal first argument names a module to import.
DYNAMIC_IMPORTS = {"import_module", "__import__", "importorskip"}

# The folders of a package whose files the third-party and private rules check.
CHECKED_DIRS = ("src", "tests")
# Import names whose distribution is named otherwise; any one of several may provide it.
# Every other name is its own distribution's name, normalized (_normalize).
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "yaml": ("pyyaml",),
    "ml_dtypes": ("ml-dtypes",),
    "opt_einsum": ("opt-einsum",),
    "jaxlib": ("jaxlib",),
    # jaxlib's CUDA plugins: lamina-interpreters' cuda12 / cuda13 extras
    "jax_plugins": ("jax-cuda12-pjrt", "jax-cuda13-pjrt", "jax-cuda12-plugin", "jax-cuda13-plugin"),
    "jax_cuda12_plugin": ("jax-cuda12-plugin",),
    "jax_cuda13_plugin": ("jax-cuda13-plugin",),
    "jax_cuda12_pjrt": ("jax-cuda12-pjrt",),
    "jax_cuda13_pjrt": ("jax-cuda13-pjrt",),
}
TEST_TOOLS = ("pytest",)  # tests may import these without declaring them
SECTIONS = {  # how the third-party rule names a pyproject's sections
    "dependencies": "[project].dependencies",
    "optional-dependencies": "[project.optional-dependencies]",
    "dependency-groups": "[dependency-groups]",
}


@dataclass(frozen=True)
class Violation:
    kind: str  # see the module docstring
    path: str  # file, relative to the repository root
    line: int
    package: str  # the offending package, e.g. "lamina-ir"
    target: str  # what it imports or declares, e.g. "lax", "lamina", "jaxlib"
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.kind}] {self.message}"


@dataclass
class Package:
    name: str  # "lamina" or "lamina-<layer>"
    layer: str | None  # None for the root meta-package
    root: Path
    pyproject: Path
    text: str  # the pyproject's text, to find line numbers
    # (section, normalized name, requirement as written), e.g.
    # ("dependencies", "lamina-ir", "lamina-ir"), ("dependency-groups.dev", "pytest", "pytest>=8")
    requirements: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def declared(self) -> set[str]:
        """Normalized names in [project].dependencies."""
        return {name for section, name, _ in self.requirements if section == "dependencies"}

    @property
    def declared_layers(self) -> set[str]:
        """The lamina layers in [project].dependencies, e.g. {"lax", "ir"}."""
        return {name.removeprefix("lamina-") for name in self.declared if _layer_of(name)}

    def declares(self, distribution: str, sections: tuple[str, ...]) -> bool:
        """Whether ``distribution`` is listed in one of ``sections`` ("dependencies",
        "optional-dependencies", "dependency-groups"; any extra or group of those)."""
        return any(
            name == distribution and section.split(".")[0] in sections
            for section, name, _ in self.requirements
        )

    def line_of(self, requirement: str) -> int:
        """The pyproject line where ``requirement`` (as written) is listed."""
        for needle in (f'"{requirement}"', f"'{requirement}'", requirement):
            if line := _line_of(self.text, needle):
                return line
        return 1


@dataclass(frozen=True)
class Import:
    """One module an import statement (or an importlib call with a literal name) brings in."""

    line: int
    module: str  # absolute: `import a.b` -> "a.b"; `from a.b import c` -> "a.b"
    name: str | None  # `from a.b import c` -> "c"; None for `import a.b` and `import *`
    scope: str  # "module" (run on import), "function" or "type-checking" (never run)
    optional: bool  # inside `try: ... except ImportError`, or pytest.importorskip

    @property
    def full(self) -> str:
        """``a.b.c`` for ``from a.b import c``: a submodule, or a name in ``a.b``."""
        return f"{self.module}.{self.name}" if self.name else self.module


@dataclass
class Source:
    """One .py file of a package, parsed."""

    path: Path
    where: str  # relative to the repository root
    folder: str  # its top folder in the package: "src", "tests", "examples", ...
    module: str | None  # its dotted name, for a file under src/
    error: Exception | None = None  # why it cannot be parsed, if it cannot
    imported: list[tuple[int, str]] = field(default_factory=list)  # imports_of(...)
    imports: list[Import] = field(default_factory=list)  # import_sites(...)


@dataclass
class Stats:
    packages: int = 0
    files: int = 0
    imports: int = 0


def allowed_closure(layer: str) -> set[str]:
    """Every layer that ``layer`` may use: its table entry and everything below it."""
    seen: set[str] = set()
    todo = list(ALLOWED[layer])
    while todo:
        dep = todo.pop()
        if dep not in seen:
            seen.add(dep)
            todo.extend(ALLOWED.get(dep, ()))
    return seen


def check(repo_root: Path) -> list[Violation]:
    """All layering violations in the workspace at ``repo_root``."""
    return run(Path(repo_root))[0]


def run(repo_root: Path) -> tuple[list[Violation], Stats]:
    stats = Stats()
    violations: list[Violation] = []
    packages = read_packages(repo_root)
    stats.packages = len(packages)
    for pkg in packages:
        violations += _check_declarations(pkg, repo_root)
    violations += _check_cycles(packages, repo_root)
    sources = [
        [read_source(pkg, path, repo_root) for path in python_files(pkg, repo_root)]
        for pkg in packages
    ]
    modules = {source.module for files in sources for source in files if source.module}
    for pkg, files in zip(packages, sources, strict=True):
        for source in files:
            stats.files += 1
            violations += _check_file(pkg, source, repo_root, stats)
            violations += _check_local_imports(pkg, source, modules)
            violations += _check_third_party(pkg, source, repo_root)
            violations += _check_private(pkg, source)
            violations += _check_internal(pkg, source)
        violations += _check_internal_cycles(pkg, files, modules)
    return _dedupe(violations), stats


# --- reading packages ------------------------------------------------------------------


def read_packages(repo_root: Path) -> list[Package]:
    """The root meta-package first, then every ``packages/*`` with a pyproject.toml."""
    paths = [repo_root / "pyproject.toml"]
    paths += sorted((repo_root / "packages").glob("*/pyproject.toml"))
    packages = []
    for path in paths:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
        project = data.get("project", {})
        is_root = path.parent == repo_root
        name = _normalize(project.get("name", "lamina" if is_root else path.parent.name))
        pkg = Package(
            name=name,
            layer=None if is_root else path.parent.name,
            root=path.parent,
            pyproject=path,
            text=text,
        )
        lists = {"dependencies": project.get("dependencies", [])}
        for extra, reqs in project.get("optional-dependencies", {}).items():
            lists[f"optional-dependencies.{extra}"] = reqs
        for group, reqs in data.get("dependency-groups", {}).items():
            lists[f"dependency-groups.{group}"] = reqs
        for section, reqs in lists.items():
            for req in reqs:
                if isinstance(req, str):  # not {include-group = "..."}
                    pkg.requirements.append((section, _requirement_name(req), req))
        packages.append(pkg)
    return packages


def python_files(pkg: Package, repo_root: Path) -> list[Path]:
    """The .py files that belong to ``pkg``."""
    tops = [repo_root / d for d in ROOT_DIRS] if pkg.layer is None else [pkg.root]
    files = []
    for top in tops:
        for path in sorted(top.rglob("*.py")):
            rel = path.relative_to(top).parts[:-1]
            if not any(part in SKIP_DIRS or part.startswith(".") for part in rel):
                files.append(path)
    return files


def read_source(pkg: Package, path: Path, repo_root: Path) -> Source:
    """``path`` parsed, with its imports."""
    source = Source(
        path, _rel(path, repo_root), path.relative_to(pkg.root).parts[0], _module_name(pkg, path)
    )
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as err:
        source.error = err
        return source
    package = _file_package(pkg, path)
    source.imported = imports_of(tree, package)
    source.imports = import_sites(tree, package)
    return source  # without the tree: keeping every tree alive slows the parsing down


def _requirement_name(req: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return _normalize(match.group(1)) if match else req.strip()


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _layer_of(dist_name: str) -> str | None:
    """``lamina-lax`` -> ``lax``; None for anything that is not ``lamina-<something>``."""
    return dist_name.removeprefix("lamina-") if dist_name.startswith("lamina-") else None


# --- checking declarations -------------------------------------------------------------


def _check_declarations(pkg: Package, repo_root: Path) -> list[Violation]:
    out = []
    where = _rel(pkg.pyproject, repo_root)

    def add(kind: str, target: str, line: int, message: str) -> None:
        out.append(Violation(kind, where, line, pkg.name, target, message))

    if pkg.layer is not None and (pkg.layer not in ALLOWED or pkg.name != f"lamina-{pkg.layer}"):
        add(
            "package",
            pkg.layer,
            _line_of(pkg.text, "name =") or 1,
            f"packages/{pkg.layer} (project name {pkg.name!r}) is not a layer of DESIGN.md's "
            f"table ({', '.join(LAYERS)}); a layer's folder is packages/<layer> and its "
            f"project name lamina-<layer>: rename it, or add the layer to DESIGN.md and to "
            f"ALLOWED in tools/layering.py",
        )
    for section, name, req in pkg.requirements:
        line = pkg.line_of(req)
        declared = f"{pkg.name} declares {name} in {section}"
        if name == "jax":
            add(
                "jax",
                name,
                line,
                f"{declared}, but JAX itself is not a dependency of lamina (DESIGN.md): "
                f"remove it; record values from JAX as literals in tests instead",
            )
        elif pkg.layer == "ir" and (name == "jaxlib" or name.startswith("jax-")):
            add(
                "jaxlib",
                name,
                line,
                f"{declared}, but lamina-ir must install without jaxlib (DESIGN.md): remove "
                f"it from packages/ir/pyproject.toml and move the code that needs jaxlib up "
                f"to lamina-interpreters",
            )
        elif name == META and pkg.layer is not None:
            add(
                "meta",
                name,
                line,
                f"{declared}, but no layer may depend on the meta-package lamina: depend on "
                f"the layers it needs instead",
            )
        elif (dep := _layer_of(name)) is not None:
            if dep not in ALLOWED:
                add(
                    "table",
                    dep,
                    line,
                    f"{declared}, which is not a layer of DESIGN.md's table "
                    f"({', '.join(LAYERS)}): fix the name or remove it",
                )
            elif pkg.layer in ALLOWED and dep not in allowed_closure(pkg.layer):
                add(
                    "table",
                    dep,
                    line,
                    f"{declared}, but DESIGN.md's table does not let {pkg.layer} use {dep} "
                    f"({_may_use(pkg.layer)}): remove the dependency and move the code that "
                    f"needs {dep} up a layer, or put a protocol in {pkg.layer} and implement "
                    f"it in {dep}",
                )
    return out


def _check_cycles(packages: list[Package], repo_root: Path) -> list[Violation]:
    by_name = {pkg.name: pkg for pkg in packages}
    graph = {pkg.name: sorted(d for d in pkg.declared if d in by_name) for pkg in packages}
    out = []
    for cycle in find_cycles(graph):
        first, second = by_name[cycle[0]], cycle[1]
        written = [r for s, n, r in first.requirements if s == "dependencies" and n == second]
        out.append(
            Violation(
                "cycle",
                _rel(first.pyproject, repo_root),
                first.line_of(written[0]),
                first.name,
                " -> ".join(cycle),
                f"declared dependencies form a cycle: {' -> '.join(cycle)}; dependencies "
                f"must only point down DESIGN.md's table: remove the upward one",
            )
        )
    return out


def find_cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Cycles found by a depth-first search, each as [a, b, ..., a], each reported once."""
    cycles: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    state: dict[str, str] = {}  # "open" while on the stack, then "done"
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt) :]
                start = cycle.index(min(cycle))
                key = tuple(cycle[start:] + cycle[:start])
                if key not in seen:
                    seen.add(key)
                    cycles.append([*cycle, nxt])
            elif nxt not in state and nxt in graph:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


# --- checking imports ------------------------------------------------------------------


def _check_file(pkg: Package, source: Source, repo_root: Path, stats: Stats) -> list[Violation]:
    """The layer table's rules (and ``jax``, ``jaxlib``, ``meta``) for one file."""
    where = source.where
    if source.error is not None:
        return [
            Violation(
                "syntax",
                where,
                getattr(source.error, "lineno", None) or 1,
                pkg.name,
                "",
                f"cannot parse this file, so its imports cannot be checked: {source.error}",
            )
        ]
    out = []
    for line, module in source.imported:
        target = classify(module)
        if target is None:
            continue
        stats.imports += 1
        message = _import_problem(pkg, source.path, repo_root, module, target)
        if message:
            kind = target if target in ("jax", "jaxlib") else _import_kind(target)
            out.append(Violation(kind, where, line, pkg.name, target, message))
    return out


def _import_kind(target: str) -> str:
    return "meta" if target == META else "undeclared"


def _import_problem(
    pkg: Package, path: Path, repo_root: Path, module: str, target: str
) -> str | None:
    """What is wrong with ``pkg`` importing ``module`` (classified as ``target``), or None."""
    imports = f"{pkg.name} imports {module}"
    if target == "jax":
        if pkg.layer is None and _under(path, [repo_root / d for d in JAX_ALLOWED_ROOT_DIRS]):
            return None
        return (
            f"{imports}, but no lamina package may import jax (DESIGN.md: JAX is not a "
            f"dependency): use lamina's own API, and record values from JAX as literals"
        )
    if target == "jaxlib":
        if pkg.layer != "ir":
            return None
        return (
            f"{imports}, but lamina-ir must install without jaxlib (DESIGN.md): move the code "
            f"up to lamina-interpreters, or put a protocol in ir and implement it there"
        )
    if pkg.layer is None or target == pkg.layer:
        return None  # the meta-package may import everything; a layer may import itself
    if target == META:
        return (
            f"{imports}, part of the meta-package lamina, which no layer may import: import "
            f"the layer that defines what you need (e.g. lamina.ir.tree_util, not "
            f"lamina.tree_util), declared in {_rel(pkg.pyproject, repo_root)} if DESIGN.md "
            f"allows it, or move the code down a layer"
        )
    if target in pkg.declared_layers:
        return None
    if pkg.layer in ALLOWED and target in allowed_closure(pkg.layer):
        verdict = f"DESIGN.md allows {pkg.layer} -> {target}"
    else:
        verdict = f"DESIGN.md does not allow {pkg.layer} -> {target}; {_may_use(pkg.layer)}"
    return (
        f"{imports} without declaring lamina-{target} ({verdict}): declare lamina-{target} "
        f"in {_rel(pkg.pyproject, repo_root)} if DESIGN.md allows it, or move the code down "
        f"a layer"
    )


def classify(module: str) -> str | None:
    """What an absolute module name is, for this check: a layer name, ``"lamina"`` (the
    meta-package), ``"jax"``, ``"jaxlib"``, or None (something else)."""
    parts = module.split(".")
    if parts[0] in ("jax", "jaxlib"):
        return parts[0]
    if parts[0] != "lamina":
        return None
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return META


def imports_of(tree: ast.AST, package: str | None) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import anywhere in ``tree``.

    ``from m import a`` gives ``m.a`` (``a`` may be a submodule, as in
    ``from lamina import numpy``). ``package`` is the file's package, for relative imports.
    """
    found: set[tuple[int, str]] = set()
    binds_lamina = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add((node.lineno, alias.name))
                if alias.asname is None and alias.name.startswith("lamina."):
                    binds_lamina = True
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node.level, node.module, package)
            if base is not None:
                found.update((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Call):
            found.update(_dynamic_imports(node))
    if binds_lamina:  # `import lamina.ir` binds `lamina`; `lamina.numpy` then reaches up
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "lamina"
            ):
                found.add((node.lineno, f"lamina.{node.attr}"))
    return sorted(found)


def import_sites(tree: ast.Module, package: str | None) -> list[Import]:
    """Every import in ``tree``, in line order, with where it runs: at ``module`` level (also
    in top-level ``if``/``try``/``with`` and class bodies), in a ``function`` body, or under
    ``if TYPE_CHECKING:`` (``type-checking``, never run); ``optional`` inside a ``try`` that
    handles ``ImportError``. ``package`` is the file's package, for relative imports."""
    sites: list[Import] = []
    todo: list[tuple[ast.AST, str, bool]] = [(tree, "module", False)]
    while todo:
        node, scope, optional = todo.pop()
        if isinstance(node, ast.Import):
            sites += [Import(node.lineno, a.name, None, scope, optional) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node.level, node.module, package)
            for alias in node.names if base else ():
                name = None if alias.name == "*" else alias.name
                sites.append(Import(node.lineno, base, name, scope, optional))
        elif isinstance(node, ast.Call):
            maybe = optional or _call_name(node) == "importorskip"
            sites += [Import(n, m, None, scope, maybe) for n, m in _dynamic_imports(node)]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            scope = "function" if scope == "module" else scope
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo += [(child, "type-checking", optional) for child in node.body]
            todo += [(child, scope, optional) for child in node.orelse]
        elif isinstance(node, (ast.Try, ast.TryStar)) and _handles_import_error(node):
            todo += [(child, scope, True) for child in node.body]
            rest = [*node.handlers, *node.orelse, *node.finalbody]
            todo += [(child, scope, optional) for child in rest]
        else:
            todo += [(child, scope, optional) for child in ast.iter_child_nodes(node)]
    return sorted(sites, key=lambda site: (site.line, site.full))


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def _handles_import_error(node: ast.Try | ast.TryStar) -> bool:
    """Whether an ``except`` clause of ``node`` names ImportError or ModuleNotFoundError."""
    for handler in node.handlers:
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names = {getattr(t, "id", getattr(t, "attr", None)) for t in types}
        if names & {"ImportError", "ModuleNotFoundError"}:
            return True
    return False


def resolve(level: int, module: str | None, package: str | None) -> str | None:
    """The absolute name of ``from <level dots><module> import ...`` inside ``package``."""
    if level == 0:
        return module
    if not package:
        return None
    parts = package.split(".")
    if level - 1 >= len(parts):
        return None  # beyond the top-level package: Python refuses it too
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _call_name(call: ast.Call) -> str | None:
    """``f`` for ``f(...)`` and ``x.f(...)``."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _dynamic_imports(call: ast.Call) -> list[tuple[int, str]]:
    name = _call_name(call)
    if name not in DYNAMIC_IMPORTS or not call.args:
        return []
    target = _literal(call.args[0])
    if target is None:
        return []
    if name == "import_module" and target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        package = _literal(_argument(call, 1, "package"))
        target = resolve(level, target[level:] or None, package)
        if target is None:
            return []
    fromlist = _argument(call, 3, "fromlist") if name == "__import__" else None
    if isinstance(fromlist, (ast.List, ast.Tuple)) and fromlist.elts:
        # like `from target import a, b`
        names = [_literal(item) for item in fromlist.elts]
        return [(call.lineno, f"{target}.{sub}") for sub in names if sub is not None]
    return [(call.lineno, target)]


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def _literal(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _file_package(pkg: Package, path: Path) -> str | None:
    """The dotted package a file under ``src/`` belongs to (for relative imports)."""
    try:
        rel = path.relative_to(pkg.root / "src")
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    parts.pop()  # the module itself, or "__init__"
    return ".".join(parts) or None


def _module_name(pkg: Package, path: Path) -> str | None:
    """The dotted name of a module under ``src/``: ``lamina.lax.foo``; ``lamina.lax`` for
    ``lamina/lax/__init__.py``."""
    try:
        parts = list(path.relative_to(pkg.root / "src").with_suffix("").parts)
    except ValueError:
        return None
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or None


# --- checking the import rules ---------------------------------------------------------


def _check_internal_cycles(pkg: Package, files: list[Source], modules: set[str]) -> list[Violation]:
    """``internal-cycle``: cycles of module-level imports between ``pkg``'s own modules."""
    own = {source.module: source for source in files if source.module}
    edges: dict[str, dict[str, int]] = {module: {} for module in own}  # -> {target: line}
    for module, source in own.items():
        for site in source.imports:
            if site.scope != "module":
                continue
            for target in imported_modules(site, module, modules):
                if target in own:
                    edges[module].setdefault(target, site.line)
    out = []
    for cycle in find_cycles({module: sorted(targets) for module, targets in edges.items()}):
        loop = " -> ".join(cycle)
        out.append(
            Violation(
                "internal-cycle",
                own[cycle[0]].where,
                edges[cycle[0]][cycle[1]],
                pkg.name,
                loop,
                f"module-level imports form a cycle inside {pkg.name}: {loop}; whichever "
                f"module is imported first sees the other half-initialized: import names from "
                f"the module that defines them (not from a package whose __init__ imports "
                f"you), and move what the modules share into a lower module that imports "
                f"none of them",
            )
        )
    return out


def imported_modules(site: Import, importer: str, modules: set[str]) -> list[str]:
    """The modules that ``site``, run in module ``importer``, may import: its target (the
    submodule ``m.c`` for ``from m import c``, else ``m``) and the packages above the target
    that are not above ``importer`` (those are already being imported). ``modules``: every
    module of the workspace, to tell a submodule from a name."""
    target = imported_module(site, modules)
    parts = target.split(".")
    parents = [".".join(parts[:i]) for i in range(1, len(parts))]
    found = [parent for parent in parents if not importer.startswith(f"{parent}.")]
    return [module for module in (*found, target) if module != importer]


def imported_module(site: Import, modules: set[str]) -> str:
    """The module ``site`` imports: the submodule ``m.c`` for ``from m import c``, else ``m``."""
    return site.full if site.name and site.full in modules else site.module


def _check_local_imports(pkg: Package, source: Source, modules: set[str]) -> list[Violation]:
    """``local-import``: a module under src/ importing lamina inside a function: a module
    of its own package, or (in a layer) any other layer. Only the root meta-package may
    load layers lazily."""
    if source.folder != "src":
        return []
    own = pkg.layer or META
    out = []
    for site in source.imports:
        target = classify(site.full)
        if site.scope != "function" or target is None or target in ("jax", "jaxlib"):
            continue
        module = imported_module(site, modules)
        if target == own:
            why = (
                "a module of its own package imported lazily (usually to dodge an import "
                "cycle): move the shared part to a lower tier so it can be imported at the "
                "top of the module"
            )
        elif pkg.layer is not None:
            why = (
                f"a module of lamina-{target}, a layer below, which is always loaded before "
                f"this one: import it at the top of the module"
            )
        else:
            continue  # the root meta-package loads layers lazily
        out.append(
            Violation(
                "local-import",
                source.where,
                site.line,
                pkg.name,
                module,
                f"{pkg.name} imports {module} inside a function, {why}",
            )
        )
    return out


def _check_third_party(pkg: Package, source: Source, repo_root: Path) -> list[Violation]:
    """``third-party``: a third-party import that ``pkg`` does not declare itself."""
    if source.folder not in CHECKED_DIRS:
        return []  # the root's benchmarks/ and examples/
    out = []
    for site in source.imports:
        top = site.module.split(".")[0]
        if (
            site.scope == "type-checking"
            or top in (META, "jax")  # jax has its own rule
            or (top == "jaxlib" and pkg.layer == "ir")  # and so has jaxlib in ir
            or top in sys.stdlib_module_names
            or (
                source.folder == "tests"
                and (top in TEST_TOOLS or _is_local(top, source, repo_root))
            )
        ):
            continue
        sections = ("dependencies",)
        if source.folder == "tests":
            sections += ("optional-dependencies", "dependency-groups")
        elif site.optional or site.scope == "function":
            sections += ("optional-dependencies",)
        distributions = DISTRIBUTIONS.get(top, (_normalize(top),))
        if any(pkg.declares(dist, sections) for dist in distributions):
            continue
        where = " or ".join(SECTIONS[section] for section in sections)
        out.append(
            Violation(
                "third-party",
                source.where,
                site.line,
                pkg.name,
                top,
                f"{pkg.name} imports {site.module} (distribution "
                f"{' or '.join(distributions)}), which {_rel(pkg.pyproject, repo_root)} does "
                f"not declare: add it to {where} (each package declares what it imports "
                f"itself; what its lamina layers depend on does not count), or stop importing "
                f"it",
            )
        )
    return out


def _is_local(top: str, source: Source, repo_root: Path) -> bool:
    """Whether ``top`` is a test helper module: ``top.py`` or ``top/__init__.py`` in the
    file's folder or a folder above it in the repository (e.g. ``tools``)."""
    return any(
        (folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()
        for folder in source.path.parents
        if folder.is_relative_to(repo_root)
    )


def _check_private(pkg: Package, source: Source) -> list[Violation]:
    """``private``: a private name of another layer imported by ``pkg``'s src/ or tests/."""
    if source.folder not in CHECKED_DIRS:
        return []
    out = []
    for site in source.imports:
        target = classify(site.full)
        private = _private_part(site.full)
        if target in LAYERS and target != pkg.layer and private:
            out.append(
                Violation(
                    "private",
                    source.where,
                    site.line,
                    pkg.name,
                    site.full,
                    f"{pkg.name} imports {site.full}, private to lamina-{target} ({private} "
                    f"starts with '_'): make what other layers need public in its layer (a "
                    f"public name of a public module of {target}) and import that",
                )
            )
    return out


def _check_internal(pkg: Package, source: Source) -> list[Violation]:
    """``internal``: a module of another layer imported by path by ``pkg``'s src/ or tests/."""
    if source.folder not in CHECKED_DIRS:
        return []
    out = []
    for site in source.imports:
        target = classify(site.module)
        if target not in LAYERS or target == pkg.layer or _private_part(site.full):
            continue  # private names have their own rule
        if site.module not in {f"lamina.{target}", *PUBLIC_MODULES.get(target, ())}:
            namespace = ".".join(site.module.split(".")[:2])
            out.append(
                Violation(
                    "internal",
                    source.where,
                    site.line,
                    pkg.name,
                    site.module,
                    f"{pkg.name} imports {site.module}, an internal module of lamina-{target}: "
                    f"import what you need from {namespace} (exported there if it is not"
                    f" yet), or from a public module of {target} "
                    f"({', '.join(PUBLIC_MODULES.get(target, ())) or 'none'})",
                )
            )
    return out


def _private_part(module: str) -> str | None:
    """The first component after ``lamina.<layer>`` that starts with ``_`` (not a dunder)."""
    for part in module.split(".")[2:]:
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return part
    return None


# --- helpers -----------------------------------------------------------------------------


def _may_use(layer: str | None) -> str:
    if layer not in ALLOWED:
        return "it is not a layer of the table"
    allowed = [other for other in LAYERS if other in allowed_closure(layer)]
    return f"{layer} may use: {', '.join(allowed) if allowed else 'no other lamina layer'}"


def _line_of(text: str, needle: str) -> int:
    """The first line holding ``needle``, or 0."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return 0


def _rel(path: Path, repo_root: Path) -> str:
    try:
        return path.relative_to(repo_root).as_posix()
    except ValueError:
        return path.as_posix()


def _under(path: Path, tops: list[Path]) -> bool:
    return any(path.is_relative_to(top) for top in tops)


def _dedupe(violations: list[Violation]) -> list[Violation]:
    return sorted(set(violations), key=lambda v: (v.path, v.line, v.kind, v.target))


def _group(violations: list[Violation], key: str) -> dict[str, list[Violation]]:
    """``violations`` by their ``key`` attribute ("kind", "package"), sorted by it."""
    groups: dict[str, list[Violation]] = {}
    for violation in violations:
        groups.setdefault(getattr(violation, key), []).append(violation)
    return dict(sorted(groups.items()))


def summary(violations: list[Violation]) -> str:
    """The count of each kind, and of internal import cycles per package."""
    kinds = ", ".join(f"{k} {len(v)}" for k, v in _group(violations, "kind").items())
    cycles = _group([v for v in violations if v.kind == "internal-cycle"], "package")
    per_package = ", ".join(f"{pkg} {len(found)}" for pkg, found in cycles.items())
    return (
        f"layering: {len(violations)} violation(s) ({kinds or 'none'}); internal import "
        f"cycles: {per_package or 'none'}"
    )


def report(violations: list[Violation], stats: Stats) -> list[str]:
    """The measurement: every violation grouped by kind and package, with counts, then the
    counts, the internal cycles and the local imports per package."""
    lines = [f"layering report: {stats.packages} packages, {stats.files} files"]
    by_kind = _group(violations, "kind")
    for kind, of_kind in by_kind.items():
        lines.append(f"== {kind}: {len(of_kind)}")
        for package, found in _group(of_kind, "package").items():
            lines.append(f"-- {kind} in {package}: {len(found)}")
            lines += [f"   {violation}" for violation in found]
    lines.append("== counts by kind and package")
    for kind, of_kind in by_kind.items():
        counts = ", ".join(f"{p} {len(f)}" for p, f in _group(of_kind, "package").items())
        lines.append(f"{kind}: {len(of_kind)} ({counts})")
    lines.append("== internal cycles")
    lines += [f"{v.package}: {v.target}" for v in by_kind.get("internal-cycle", [])]
    lines.append("== local imports per package")
    for package, found in _group(by_kind.get("local-import", []), "package").items():
        lines.append(f"{package}: {len(found)}")
    lines.append(summary(violations))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The layering check (tools/layering.py).")
    parser.add_argument(
        "repo_root", nargs="?", type=Path, default=Path(__file__).resolve().parents[1]
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="print every violation grouped by kind and package, with counts; exit 0",
    )
    args = parser.parse_args(argv)
    violations, stats = run(args.repo_root.resolve())
    if args.report:
        print("\n".join(report(violations, stats)))
        return 0
    if violations:
        print(f"layering: {len(violations)} violation(s) of DESIGN.md's layer table and rules:")
        for violation in violations:
            print(violation)
        print(summary(violations))
        return 1
    print(
        f"layering: ok: {stats.packages} packages, {stats.files} files, {stats.imports} "
        f"lamina/jax imports checked against DESIGN.md's layer table and rules, no internal "
        f"import cycles"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
