"""The layering check: every lamina package imports only what DESIGN.md's layer table allows.

Run it as ``uv run python tools/layering.py [REPO_ROOT]``: it prints one line per violation
and exits 1, or prints a one-line summary and exits 0. Tests import it and call ``check``.

What it reads:

* every package's ``pyproject.toml`` (the root meta-package ``lamina`` and ``packages/*``),
  for the lamina layers it declares in ``[project].dependencies``;
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
* ``syntax``: a file that cannot be parsed, so cannot be checked.
"""

from __future__ import annotations

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
    "export": ("interpreters", "lax"),
    "pallas": ("numpy", "lax"),
    "profiler": ("interpreters",),
}
LAYERS = tuple(ALLOWED)
# Public modules shipped by a layer under a name of their own (none at present).
PORTIONS: dict[str, str] = {}
META = "lamina"  # the root meta-package; it may declare and import every layer

# Folders of the root package that are scanned; "benchmarks" may import jax, because
# DESIGN.md's benchmark targets are ratios against JAX measured in the same run.
ROOT_DIRS = ("src", "tests", "examples", "benchmarks")
JAX_ALLOWED_ROOT_DIRS = ("benchmarks",)
SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}  # and every ".hidden" folder

# Calls whose literal first argument names a module to import.
DYNAMIC_IMPORTS = {"import_module", "__import__", "importorskip"}


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

    def line_of(self, requirement: str) -> int:
        """The pyproject line where ``requirement`` (as written) is listed."""
        for needle in (f'"{requirement}"', f"'{requirement}'", requirement):
            if line := _line_of(self.text, needle):
                return line
        return 1


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
    for pkg in packages:
        for path in python_files(pkg, repo_root):
            stats.files += 1
            violations += _check_file(pkg, path, repo_root, stats)
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


def _check_file(pkg: Package, path: Path, repo_root: Path, stats: Stats) -> list[Violation]:
    where = _rel(path, repo_root)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as err:
        line = getattr(err, "lineno", None) or 1
        return [
            Violation(
                "syntax",
                where,
                line,
                pkg.name,
                "",
                f"cannot parse this file, so its imports cannot be checked: {err}",
            )
        ]
    out = []
    for line, module in imports_of(tree, _file_package(pkg, path, repo_root)):
        target = classify(module)
        if target is None:
            continue
        stats.imports += 1
        message = _import_problem(pkg, path, repo_root, module, target)
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
    if len(parts) > 1 and parts[1] in PORTIONS:
        return PORTIONS[parts[1]]
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


def _dynamic_imports(call: ast.Call) -> list[tuple[int, str]]:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
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


def _file_package(pkg: Package, path: Path, repo_root: Path) -> str | None:
    """The dotted package a file under ``src/`` belongs to (for relative imports)."""
    try:
        rel = path.relative_to(pkg.root / "src")
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    parts.pop()  # the module itself, or "__init__"
    return ".".join(parts) or None


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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    repo_root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    violations, stats = run(repo_root)
    if violations:
        print(f"layering: {len(violations)} violation(s) of DESIGN.md's layer table:")
        for violation in violations:
            print(violation)
        return 1
    print(
        f"layering: ok: {stats.packages} packages, {stats.files} files, {stats.imports} "
        f"lamina/jax imports checked against DESIGN.md's layer table"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
