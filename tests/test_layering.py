"""The layering check (tools/layering.py): clean on the real repository, and failing, with a
message that says what to do, on fake workspaces that break DESIGN.md's layer table."""

import ast
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

from tools import layering

REPO = Path(__file__).resolve().parents[1]


# A clean fake workspace: four layers declaring what the table lets them use.
CLEAN = {
    "ir": [],
    "interpreters": ["ir"],
    "lax": ["interpreters", "ir"],
    "numpy": ["lax", "interpreters", "ir"],
}


def make_workspace(root, deps=None, extra=None, files=None):
    """Write a fake lamina workspace under ``root``: the meta-package and one package per
    layer in ``deps`` (layer -> the lamina layers it declares), each with an ``__init__.py``
    and a test. ``extra`` adds third-party requirements; ``files`` adds or replaces files."""
    deps = CLEAN if deps is None else deps
    extra = extra or {}

    def pyproject(name, requirements):
        listed = "".join(f'  "{req}",\n' for req in requirements)
        return f'[project]\nname = "{name}"\nversion = "0.1.0"\ndependencies = [\n{listed}]\n'

    write = {
        "pyproject.toml": pyproject("lamina", [f"lamina-{layer}" for layer in deps]),
        "src/lamina/__init__.py": '"""The meta-package."""\n',
        "tests/test_api.py": "import lamina\nfrom lamina import numpy as jnp\n",
    }
    for layer, layer_deps in deps.items():
        requirements = [f"lamina-{dep}" for dep in layer_deps] + extra.get(layer, [])
        write[f"packages/{layer}/pyproject.toml"] = pyproject(f"lamina-{layer}", requirements)
        write[f"packages/{layer}/src/lamina/{layer}/__init__.py"] = f'"""lamina.{layer}"""\n'
        write[f"packages/{layer}/tests/test_{layer}.py"] = f"import lamina.{layer}\n"
    write.update(files or {})
    for rel, text in write.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    return root


def only(violations, kind):
    """The one violation of ``kind``, after checking there is exactly one."""
    found = [v for v in violations if v.kind == kind]
    assert len(found) == 1, "\n".join(map(str, violations))
    return found[0]


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_real_repository_follows_the_layer_table():
    violations = layering.check(REPO)
    assert violations == [], "\n".join(map(str, violations))


def test_a_clean_fake_workspace_passes(tmp_path):
    assert layering.check(make_workspace(tmp_path)) == []


def test_the_table_allows_the_closure_downward():
    assert layering.allowed_closure("ir") == set()
    assert layering.allowed_closure("numpy") == {"lax", "interpreters", "ir"}
    assert layering.allowed_closure("profiler") == {"interpreters", "ir"}
    assert "sharding" not in layering.allowed_closure("nn")


def test_upward_import_from_a_lower_layer(tmp_path):
    root = make_workspace(
        tmp_path,
        files={
            "packages/ir/src/lamina/ir/core.py": "import numpy as np\nfrom lamina.lax import add\n"
        },
    )
    violation = only(layering.check(root), "undeclared")
    assert (violation.path, violation.line) == ("packages/ir/src/lamina/ir/core.py", 2)
    assert (violation.package, violation.target) == ("lamina-ir", "lax")
    assert str(violation).startswith("packages/ir/src/lamina/ir/core.py:2: [undeclared] ")
    assert "lamina-ir imports lamina.lax.add without declaring lamina-lax" in violation.message
    assert "DESIGN.md does not allow ir -> lax" in violation.message
    assert (
        "declare lamina-lax in packages/ir/pyproject.toml if DESIGN.md allows it, "
        "or move the code down a layer" in violation.message
    )


def test_an_allowed_but_undeclared_layer_is_reported_as_allowed(tmp_path):
    deps = {**CLEAN, "numpy": ["lax"]}  # numpy may use ir, but does not declare it
    root = make_workspace(
        tmp_path, deps, files={"packages/numpy/src/lamina/numpy/a.py": "import lamina.ir.dtypes\n"}
    )
    violation = only(layering.check(root), "undeclared")
    assert violation.target == "ir"
    assert "DESIGN.md allows numpy -> ir" in violation.message
    assert "declare lamina-ir in packages/numpy/pyproject.toml" in violation.message


def test_an_import_hidden_inside_a_function(tmp_path):
    source = """\
        def solve(x):
            if x:
                try:
                    import lamina.numpy.linalg as la
                except ImportError:
                    return None
            return la
    """
    root = make_workspace(tmp_path, files={"packages/lax/src/lamina/lax/solve.py": source})
    violation = only(layering.check(root), "undeclared")
    assert (violation.line, violation.package, violation.target) == (4, "lamina-lax", "numpy")
    assert "lamina-lax imports lamina.numpy.linalg" in violation.message


def test_importlib_with_literal_names(tmp_path):
    source = """\
        import importlib
        from importlib import import_module

        a = importlib.import_module("lamina.numpy")
        b = import_module(".numpy.fft", "lamina")
        c = __import__("lamina.numpy")
        d = __import__("lamina", fromlist=["numpy"])
        e = importlib.import_module(name_chosen_at_run_time)
    """
    root = make_workspace(tmp_path, files={"packages/lax/tests/test_dynamic.py": source})
    violations = layering.check(root)
    assert [(v.kind, v.line, v.target) for v in violations] == [
        ("undeclared", line, "numpy") for line in (4, 5, 6, 7)
    ]
    assert all(v.path == "packages/lax/tests/test_dynamic.py" for v in violations)
    assert "lamina-lax imports lamina.numpy.fft" in violations[1].message


def test_from_lamina_import_a_layer(tmp_path):
    source = "from lamina import numpy as jnp\n"
    root = make_workspace(tmp_path, files={"packages/lax/src/lamina/lax/uses.py": source})
    violation = only(layering.check(root), "undeclared")
    assert (violation.line, violation.target) == (1, "numpy")
    assert "lamina-lax imports lamina.numpy without declaring lamina-numpy" in violation.message


def test_relative_imports_are_resolved_against_the_files_package(tmp_path):
    source = """\
        from .. import dtypes
        from ...lax import core
        from ... import numpy
    """
    root = make_workspace(tmp_path, files={"packages/ir/src/lamina/ir/sub/mod.py": source})
    violations = layering.check(root)
    assert [(v.kind, v.line, v.target) for v in violations] == [
        ("undeclared", 2, "lax"),
        ("undeclared", 3, "numpy"),
    ]
    assert "lamina-ir imports lamina.lax.core" in violations[0].message


def test_a_layer_may_not_import_the_meta_package(tmp_path):
    source = """\
        import lamina
        from lamina import jit

        def f():
            return lamina.numpy
    """
    root = make_workspace(tmp_path, files={"packages/lax/src/lamina/lax/top.py": source})
    violations = layering.check(root)
    assert [(v.kind, v.line, v.target) for v in violations] == [
        ("meta", 1, "lamina"),
        ("meta", 2, "lamina"),
    ]
    assert "lamina-lax imports lamina, part of the meta-package lamina" in violations[0].message
    assert "lamina-lax imports lamina.jit" in violations[1].message


def test_a_layer_reaching_up_through_the_lamina_name(tmp_path):
    source = "import lamina.ir\n\nzeros = lamina.numpy.zeros\n"
    root = make_workspace(tmp_path, files={"packages/lax/src/lamina/lax/reach.py": source})
    violation = only(layering.check(root), "undeclared")
    assert (violation.line, violation.target) == (3, "numpy")


def test_the_meta_package_may_import_every_layer(tmp_path):
    source = "import lamina\nimport lamina.numpy\nfrom lamina import lax\nfrom . import ir\n"
    root = make_workspace(tmp_path, files={"src/lamina/api.py": source, "examples/demo.py": source})
    assert layering.check(root) == []


def test_a_declared_cycle(tmp_path):
    root = make_workspace(tmp_path, deps={"ir": ["lax"], "lax": ["ir"]})
    violations = layering.check(root)
    cycle = only(violations, "cycle")
    assert cycle.target == "lamina-ir -> lamina-lax -> lamina-ir"
    assert (
        "declared dependencies form a cycle: lamina-ir -> lamina-lax -> lamina-ir" in cycle.message
    )
    assert cycle.path == "packages/ir/pyproject.toml"
    assert cycle.line == line_of(root / cycle.path, '"lamina-lax"')
    assert only(violations, "table").target == "lax"  # ir may not declare lax at all


def test_a_declaration_that_contradicts_the_table(tmp_path):
    deps = {
        **CLEAN,
        "sharding": ["interpreters", "lax", "ir"],
        "nn": ["numpy", "lax", "sharding"],
    }
    root = make_workspace(tmp_path, deps)
    violation = only(layering.check(root), "table")
    assert (violation.path, violation.package, violation.target) == (
        "packages/nn/pyproject.toml",
        "lamina-nn",
        "sharding",
    )
    assert violation.line == line_of(root / violation.path, '"lamina-sharding"')
    assert (
        "lamina-nn declares lamina-sharding in dependencies, but DESIGN.md's table does not "
        "let nn use sharding (nn may use: ir, interpreters, lax, numpy, random)"
        in violation.message
    )


def test_an_unknown_layer_and_a_layer_declaring_the_meta_package(tmp_path):
    root = make_workspace(tmp_path, extra={"lax": ["lamina-linalg", "lamina"]})
    violations = layering.check(root)
    assert "lamina-lax declares lamina-linalg in dependencies, which is not a layer" in (
        only(violations, "table").message
    )
    assert "no layer may depend on the meta-package" in only(violations, "meta").message


def test_ir_must_install_without_jaxlib(tmp_path):
    root = make_workspace(
        tmp_path,
        extra={"ir": ["numpy>=1.26", "jaxlib==0.10.2"], "interpreters": ["jaxlib==0.10.2"]},
    )
    violation = only(layering.check(root), "jaxlib")
    assert (violation.path, violation.package, violation.target) == (
        "packages/ir/pyproject.toml",
        "lamina-ir",
        "jaxlib",
    )
    assert violation.line == line_of(root / violation.path, "jaxlib")
    assert "lamina-ir must install without jaxlib" in violation.message


def test_ir_must_not_import_jaxlib(tmp_path):
    files = {
        "packages/ir/src/lamina/ir/backend.py": "def f():\n    from jaxlib import xla_client\n",
        "packages/interpreters/src/lamina/interpreters/jl.py": "from jaxlib import xla_client\n",
    }
    violation = only(layering.check(make_workspace(tmp_path, files=files)), "jaxlib")
    assert (violation.path, violation.line) == ("packages/ir/src/lamina/ir/backend.py", 2)
    assert "lamina-ir imports jaxlib.xla_client" in violation.message


def test_no_package_imports_jax(tmp_path):
    files = {
        "packages/lax/src/lamina/lax/ref.py": "import jax.numpy as jnp\n",
        "tests/test_against_jax.py": "import pytest\n\njax = pytest.importorskip('jax')\n",
        "benchmarks/bench_jit.py": "import jax\n",  # benchmarks compare against JAX
    }
    violations = layering.check(make_workspace(tmp_path, files=files))
    assert [(v.kind, v.path, v.line) for v in violations] == [
        ("jax", "packages/lax/src/lamina/lax/ref.py", 1),
        ("jax", "tests/test_against_jax.py", 3),
    ]
    assert "no lamina package may import jax" in violations[0].message


def test_a_file_that_cannot_be_parsed(tmp_path):
    files = {"packages/lax/src/lamina/lax/broken.py": "def f(:\n"}
    violation = only(layering.check(make_workspace(tmp_path, files=files)), "syntax")
    assert violation.path == "packages/lax/src/lamina/lax/broken.py"


def test_a_package_folder_that_is_not_a_layer(tmp_path):
    deps = {**CLEAN, "linalg": ["lax"]}
    violation = only(layering.check(make_workspace(tmp_path, deps)), "package")
    assert violation.path == "packages/linalg/pyproject.toml"


def test_main_reports_violations_and_exits_1(tmp_path, capsys):
    files = {"packages/ir/src/lamina/ir/core.py": "import lamina.lax\n"}
    assert layering.main([str(make_workspace(tmp_path, files=files))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "layering: 1 violation(s) of DESIGN.md's layer table and rules:"
    assert out[1].startswith("packages/ir/src/lamina/ir/core.py:1: [undeclared] lamina-ir imports")
    assert out[-1] == "layering: 1 violation(s) (undeclared 1); internal import cycles: none"


def test_main_prints_one_line_and_exits_0(tmp_path, capsys):
    assert layering.main([str(make_workspace(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].startswith("layering: ok: 5 packages")


def test_the_script_runs_on_the_real_repository():
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "layering.py")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("layering: ok")


# --- the import rules: internal-cycle, local-import, third-party, private -----------------


def test_import_sites_know_where_an_import_runs():
    source = """\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import a
        try:
            import b
        except (ImportError, OSError):
            b = None
        class C:
            import c
            def method(self):
                import d
        f = lambda: __import__("e")
    """
    sites = layering.import_sites(ast.parse(dedent(source)), None)
    assert [(s.full, s.scope, s.optional) for s in sites] == [
        ("typing.TYPE_CHECKING", "module", False),
        ("a", "type-checking", False),
        ("b", "module", True),
        ("c", "module", False),
        ("d", "function", False),
        ("e", "function", False),
    ]


def test_an_internal_import_cycle(tmp_path):
    files = {
        # a submodule importing its own package, whose __init__ imports it
        "packages/lax/src/lamina/lax/__init__.py": "from lamina.lax.core import add\n",
        "packages/lax/src/lamina/lax/core.py": "import numpy\nfrom lamina.lax import shapes\n",
        "packages/lax/src/lamina/lax/shapes.py": "from lamina.lax import reshape\n",
        # two siblings importing each other at module level (one inside a top-level try)
        "packages/numpy/src/lamina/numpy/elementwise.py": "from . import binary\n",
        "packages/numpy/src/lamina/numpy/binary.py": (
            "try:\n    from lamina.numpy.elementwise import add\nexcept ImportError:\n    pass\n"
        ),
    }
    violations = [v for v in layering.check(make_workspace(tmp_path, files=files))]
    cycles = [v for v in violations if v.kind == "internal-cycle"]
    assert [(v.path, v.line, v.package, v.target) for v in cycles] == [
        (
            "packages/lax/src/lamina/lax/__init__.py",
            1,
            "lamina-lax",
            "lamina.lax -> lamina.lax.core -> lamina.lax.shapes -> lamina.lax",
        ),
        (
            "packages/numpy/src/lamina/numpy/binary.py",
            2,
            "lamina-numpy",
            "lamina.numpy.binary -> lamina.numpy.elementwise -> lamina.numpy.binary",
        ),
    ]
    assert (
        "module-level imports form a cycle inside lamina-lax: "
        "lamina.lax -> lamina.lax.core -> lamina.lax.shapes -> lamina.lax" in cycles[0].message
    )
    assert "import names from the module that defines them" in cycles[0].message


def test_a_package_init_importing_its_submodules_is_not_a_cycle(tmp_path):
    files = {
        "packages/lax/src/lamina/lax/__init__.py": (
            "from lamina.lax import a, b\nfrom lamina.lax.linalg import qr\n"
        ),
        "packages/lax/src/lamina/lax/a.py": (
            "from . import b\nfrom lamina.lax import b as bb\nimport lamina.lax.b\n"
        ),
        "packages/lax/src/lamina/lax/b.py": """\
            from typing import TYPE_CHECKING

            from lamina.lax.linalg.qr import qr

            if TYPE_CHECKING:
                from lamina.lax.a import A
        """,
        "packages/lax/src/lamina/lax/linalg/__init__.py": "from .qr import qr\n",
        "packages/lax/src/lamina/lax/linalg/qr.py": "from lamina.lax.linalg import _lapack\n",
        "packages/lax/src/lamina/lax/linalg/_lapack.py": "",
        "packages/lax/src/lamina/lax/prng/__init__.py": "from lamina.lax.prng.keys import key\n",
        "packages/lax/src/lamina/lax/prng/keys.py": "from lamina.lax.a import A\n",
    }
    assert layering.check(make_workspace(tmp_path, files=files)) == []


def test_a_lazy_import_of_a_sibling_module(tmp_path):
    files = {
        "packages/lax/src/lamina/lax/shapes.py": "",
        "packages/lax/src/lamina/lax/prng/keys.py": "",
        "packages/lax/src/lamina/lax/core.py": """\
            def reshape(x):
                from lamina.lax import shapes
                return shapes


            class Key:
                def split(self):
                    if self:
                        import lamina.lax.prng.keys
        """,
        "src/lamina/api.py": "def jit():\n    from lamina import tree_util\n",
        "src/lamina/tree_util.py": "",
    }
    violations = layering.check(make_workspace(tmp_path, files=files))
    assert [(v.kind, v.path, v.line, v.package, v.target) for v in violations] == [
        (
            "local-import",
            "packages/lax/src/lamina/lax/core.py",
            2,
            "lamina-lax",
            "lamina.lax.shapes",
        ),
        (
            "local-import",
            "packages/lax/src/lamina/lax/core.py",
            9,
            "lamina-lax",
            "lamina.lax.prng.keys",
        ),
        ("local-import", "src/lamina/api.py", 2, "lamina", "lamina.tree_util"),
    ]
    assert (
        "lamina-lax imports lamina.lax.shapes inside a function, a module of its own package"
        in violations[0].message
    )
    assert "move the shared part to a lower tier" in violations[0].message


def test_lazy_imports_of_third_party_modules_and_of_higher_layers_from_the_root(tmp_path):
    files = {
        "packages/lax/src/lamina/lax/shapes.py": "",
        "packages/lax/src/lamina/lax/core.py": """\
            from typing import TYPE_CHECKING

            if TYPE_CHECKING:
                from lamina.lax.shapes import Shape


            def reshape(x):
                import numpy as np
                return np
        """,
        "packages/lax/tests/test_core.py": "def test_it():\n    from lamina.lax import core\n",
        "src/lamina/api.py": "def numpy():\n    from lamina import numpy\n    import lamina.lax\n",
    }
    root = make_workspace(tmp_path, extra={"lax": ["numpy>=1.26"]}, files=files)
    assert layering.check(root) == []


def test_a_lazy_import_of_a_lower_layer(tmp_path):
    files = {
        "packages/lax/src/lamina/lax/core.py": """\
            def reshape(x):
                from lamina.interpreters import jit
                return jit
        """,
    }
    violations = layering.check(make_workspace(tmp_path, files=files))
    assert [(v.kind, v.path, v.line, v.target) for v in violations] == [
        ("local-import", "packages/lax/src/lamina/lax/core.py", 2, "lamina.interpreters"),
    ]
    assert "a module of lamina-interpreters, a layer below" in violations[0].message
    assert "import it at the top of the module" in violations[0].message


def test_an_undeclared_third_party_import(tmp_path):
    files = {
        "packages/ir/src/lamina/ir/core.py": """\
            import os
            import yaml
            from ml_dtypes import bfloat16
            import scipy.linalg


            def plot():
                import matplotlib.pyplot as plt
                return plt
        """,
        "packages/ir/tests/test_core.py": "import hypothesis\n",
        # lamina-lax declares numpy; lamina-numpy, which depends on it, must declare it too
        "packages/numpy/src/lamina/numpy/a.py": "import numpy as np\n",
    }
    root = make_workspace(tmp_path, extra={"ir": ["ml_dtypes>=0.5"], "lax": ["numpy"]}, files=files)
    violations = layering.check(root)
    assert [(v.kind, v.path, v.line, v.target) for v in violations] == [
        ("third-party", "packages/ir/src/lamina/ir/core.py", 2, "yaml"),
        ("third-party", "packages/ir/src/lamina/ir/core.py", 4, "scipy"),
        ("third-party", "packages/ir/src/lamina/ir/core.py", 8, "matplotlib"),
        ("third-party", "packages/ir/tests/test_core.py", 1, "hypothesis"),
        ("third-party", "packages/numpy/src/lamina/numpy/a.py", 1, "numpy"),
    ]
    assert violations[0].message.startswith(
        "lamina-ir imports yaml (distribution pyyaml), which packages/ir/pyproject.toml does "
        "not declare: add it to [project].dependencies ("
    )
    assert "add it to [project].dependencies or [project.optional-dependencies]" in (
        violations[2].message
    )
    assert "or [dependency-groups]" in violations[3].message
    assert "what its lamina layers depend on does not count" in violations[4].message


def test_declared_and_optional_third_party_imports(tmp_path):
    pyproject = """\
        [project]
        name = "lamina-interpreters"
        dependencies = ["lamina-ir", "numpy>=1.26", "jaxlib==0.10.2", "PyYAML"]

        [project.optional-dependencies]
        cuda12 = ["jax-cuda12-pjrt==0.10.2"]
        plot = ["matplotlib"]

        [dependency-groups]
        dev = ["pytest>=8", "hypothesis"]
    """
    files = {
        "packages/interpreters/pyproject.toml": pyproject,
        "packages/interpreters/src/lamina/interpreters/backend.py": """\
            import sys

            import jaxlib.xla_client
            import numpy as np
            import yaml

            try:
                import jax_plugins.xla_cuda12
            except ModuleNotFoundError:
                pass


            def plot():
                import matplotlib.pyplot as plt
                return plt
        """,
        "packages/interpreters/tests/helpers.py": "",
        "packages/interpreters/tests/test_backend.py": """\
            import hypothesis
            import pytest

            import helpers

            mpl = pytest.importorskip("matplotlib")
        """,
        "benchmarks/bench.py": "import pandas\n",  # benchmarks and examples are exempt
        "examples/demo.py": "import matplotlib\n",
    }
    assert layering.check(make_workspace(tmp_path, files=files)) == []


def test_importing_a_private_name_of_another_layer(tmp_path):
    files = {
        "packages/numpy/src/lamina/numpy/a.py": """\
            from lamina.lax import __version__
            from lamina.lax.conversion import _convert_element_type
            from lamina.lax._common import aval_of
            import lamina.lax._scatter_ad
        """,
        "packages/numpy/tests/test_a.py": "from lamina.lax.prng._keys import key_data\n",
        "tests/test_private.py": "from lamina.ir.core import _Tracer\n",
    }
    violations = layering.check(make_workspace(tmp_path, files=files))
    assert [(v.kind, v.path, v.line, v.package, v.target) for v in violations] == [
        (
            "private",
            "packages/numpy/src/lamina/numpy/a.py",
            2,
            "lamina-numpy",
            "lamina.lax.conversion._convert_element_type",
        ),
        (
            "private",
            "packages/numpy/src/lamina/numpy/a.py",
            3,
            "lamina-numpy",
            "lamina.lax._common.aval_of",
        ),
        (
            "private",
            "packages/numpy/src/lamina/numpy/a.py",
            4,
            "lamina-numpy",
            "lamina.lax._scatter_ad",
        ),
        (
            "private",
            "packages/numpy/tests/test_a.py",
            1,
            "lamina-numpy",
            "lamina.lax.prng._keys.key_data",
        ),
        ("private", "tests/test_private.py", 1, "lamina", "lamina.ir.core._Tracer"),
    ]
    assert violations[0].message.startswith(
        "lamina-numpy imports lamina.lax.conversion._convert_element_type, private to "
        "lamina-lax (_convert_element_type starts with '_'): make what other layers need "
        "public in its layer"
    )


def test_private_names_inside_their_own_layer(tmp_path):
    files = {
        "packages/lax/src/lamina/lax/_common.py": "",
        "packages/lax/src/lamina/lax/conversion.py": (
            "from lamina.lax._common import aval_of\nfrom lamina.lax.prng._bits import _bits\n"
        ),
        "packages/lax/tests/test_conversion.py": "from lamina.lax.conversion import _convert\n",
        "src/lamina/api.py": "from lamina._config import _flags\n",  # the root's own
    }
    assert layering.check(make_workspace(tmp_path, files=files)) == []


def test_main_report_groups_violations_by_kind_and_package(tmp_path, capsys):
    files = {
        "packages/lax/src/lamina/lax/__init__.py": "from lamina.lax.core import add\n",
        "packages/lax/src/lamina/lax/core.py": (
            "from lamina.lax import sub\n\n\ndef f():\n    import lamina.lax.core\n"
        ),
        "packages/numpy/src/lamina/numpy/a.py": "from lamina.lax import _private\n",
    }
    assert layering.main(["--report", str(make_workspace(tmp_path, files=files))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "== internal-cycle: 1" in out
    assert "-- internal-cycle in lamina-lax: 1" in out
    assert "== local-import: 1" in out
    assert "-- private in lamina-numpy: 1" in out
    assert "private: 1 (lamina-numpy 1)" in out
    assert "lamina-lax: lamina.lax -> lamina.lax.core -> lamina.lax" in out  # the cycles
    assert out[-1] == (
        "layering: 3 violation(s) (internal-cycle 1, local-import 1, private 1); "
        "internal import cycles: lamina-lax 1"
    )


def test_reaching_into_another_layers_modules(tmp_path):
    files = {
        "packages/numpy/src/lamina/numpy/a.py": """\
            from lamina.lax.conversion import convert_element_type
            import lamina.interpreters.jit
            from lamina.lax.linalg.qr import qr
        """,
        "tests/test_internal.py": "from lamina.ir.core import Var\n",
    }
    violations = layering.check(make_workspace(tmp_path, files=files))
    assert [(v.kind, v.path, v.line, v.package, v.target) for v in violations] == [
        (
            "internal",
            "packages/numpy/src/lamina/numpy/a.py",
            1,
            "lamina-numpy",
            "lamina.lax.conversion",
        ),
        (
            "internal",
            "packages/numpy/src/lamina/numpy/a.py",
            2,
            "lamina-numpy",
            "lamina.interpreters.jit",
        ),
        (
            "internal",
            "packages/numpy/src/lamina/numpy/a.py",
            3,
            "lamina-numpy",
            "lamina.lax.linalg.qr",
        ),
        ("internal", "tests/test_internal.py", 1, "lamina", "lamina.ir.core"),
    ]
    assert violations[0].message.startswith(
        "lamina-numpy imports lamina.lax.conversion, an internal module of lamina-lax: import "
        "what you need from lamina.lax"
    )


def test_a_layers_namespace_and_public_modules(tmp_path):
    files = {
        "packages/numpy/src/lamina/numpy/a.py": """\
            from lamina.lax import convert_element_type
            from lamina.lax.linalg import qr
            from lamina.interpreters import batching
            from lamina.interpreters.test_util import check_grads
            import lamina.ir.tree_util
        """,
        "packages/lax/src/lamina/lax/b.py": "from lamina.lax.conversion import convert\n",
        "tests/test_public.py": "from lamina.numpy.fft import fft\nimport lamina.random\n",
    }
    assert layering.check(make_workspace(tmp_path, files=files)) == []
