"""lamina and JAX 0.10.2 in one process: each gives the same results as alone.

JAX is installed for this test only, into a temporary folder put on ``PYTHONPATH`` of a
child process (lamina's environment already has every dependency of JAX's, jaxlib
0.10.2 included). The test is skipped only when JAX cannot be installed here.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import sys
    import numpy as np

    if sys.argv[1] == "jax-first":
        import jax, jax.numpy as jnp
    import lamina, lamina.numpy as lnp

    # A host copy jaxlib cannot take through the buffer protocol (bfloat16) must not
    # load JAX.
    np.asarray(lnp.ones(2, lnp.bfloat16))
    assert (sys.argv[1] == "jax-first") == ("jax" in sys.modules)
    if sys.argv[1] == "lamina-first":
        import jax, jax.numpy as jnp

    def run(lib, np_):
        x = np_.arange(6.0).reshape(2, 3)
        out = {
            "repr": repr(x[0]),
            "ops": np.asarray((x * 2 + 1).T @ x).tolist(),
            "bf16": np.asarray(x.astype(np_.bfloat16)).astype(float).tolist(),
            "float": float(x.astype(np_.bfloat16)[1, 2]),
            "jit": np.asarray(lib.jit(lambda a: np_.sin(a).sum(0))(x)).tolist(),
            "grad": np.asarray(lib.grad(lambda a: (a**2).sum())(x)).tolist(),
            "vmap": np.asarray(lib.vmap(lambda a: a.max())(x)).tolist(),
            "scan": np.asarray(
                lib.lax.scan(lambda c, r: (c + r, c * r), np_.zeros(3), x)[1]
            ).tolist(),
            "random": np.asarray(lib.random.uniform(lib.random.key(0), (3,))).tolist(),
            "isinstance": [isinstance(x, lib.Array)],
            "device": str(x.device),
            "sharding": repr(x.sharding),
        }
        lib.jit(lambda a: out["isinstance"].append(isinstance(a, lib.Array)) or a)(x)
        return out

    ours, theirs = run(lamina, lnp), run(jax, jnp)
    assert ours == theirs, (ours, theirs)
    assert ours["isinstance"] == [True, True]
    print("same results")
    """
)


@pytest.fixture(scope="module")
def jax_folder(tmp_path_factory):
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("JAX is not installable here: uv is not on PATH")
    folder = tmp_path_factory.mktemp("jax")
    result = subprocess.run(
        [uv, "pip", "install", "--quiet", "--no-deps", "--target", str(folder), "jax==0.10.2"],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"JAX 0.10.2 is not installable here: {result.stderr.strip()[-300:]}")
    return folder


@pytest.mark.parametrize("order", ["lamina-first", "jax-first"])
def test_lamina_and_jax_in_one_process(jax_folder, order):
    env = dict(os.environ, PYTHONPATH=str(jax_folder))
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, order], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "same results" in result.stdout


def test_host_copies_never_import_jax(tmp_path):
    """A bfloat16 host copy (which jaxlib serves by importing ``jax.core``) never loads an
    importable ``jax``: here one that leaves a mark when imported."""
    mark = tmp_path / "imported"
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()")
    code = (
        "import numpy as np, lamina.numpy as lnp\n"
        "x = lnp.ones(2, lnp.bfloat16)\n"
        "assert np.asarray(x).tolist() == [1, 1]\n"
        "assert float(x[0]) == 1.0 and str(x) == '[1 1]'\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert not mark.exists()
