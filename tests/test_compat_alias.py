"""``lamina.compat``: ``import jax`` resolving to lamina, opt-in, and undone on request;
under the alias ``jax.__version__`` is the JAX API version lamina implements."""

import subprocess
import sys
import textwrap

import lamina


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args, "-c", textwrap.dedent(code)]
        if not args
        else [sys.executable, *args],
        capture_output=True,
        text=True,
    )


def test_import_jax_resolves_to_lamina():
    result = _run(
        """
        import sys
        import lamina, lamina.compat
        assert "jax" not in sys.modules
        lamina.compat.install()
        import jax, jax.numpy as jnp
        from jax import lax, tree_util
        import jax.core
        from jax.experimental import checkify
        assert jnp is lamina.numpy and lax is lamina.lax and tree_util is lamina.tree_util
        assert jax.core is lamina.core and checkify is lamina.experimental.checkify
        assert jax.jit is lamina.jit and jax.numpy is lamina.numpy
        assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2)
        assert lamina.__version__ == "0.1.0"
        assert "numpy" in dir(jax) and "__version_info__" in dir(jax)
        print(float(jax.grad(lambda x: jnp.sin(x) * 2)(0.0)))
        try:
            import jax.no_such_module
        except ModuleNotFoundError as e:
            assert e.name == "jax.no_such_module", e.name
        import jaxlib
        assert jaxlib.__name__ == "jaxlib" and not hasattr(jaxlib, "__lamina_alias__")
        lamina.compat.uninstall()
        assert not lamina.compat.installed()
        assert not [n for n in sys.modules if n == "jax" or n.startswith("jax.")]
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2.0"


def test_patching_a_jax_module_reaches_lamina_code():
    # chex patches ``jax.lax.stop_gradient`` with mock: the module is lamina.lax itself.
    result = _run(
        """
        from unittest import mock
        import lamina, lamina.compat
        lamina.compat.install()
        import jax
        with mock.patch("jax.lax.stop_gradient", lambda x: x * 0):
            assert float(jax.lax.stop_gradient(3.0)) == 0.0
            assert lamina.lax.stop_gradient(3.0) == 0.0
        assert float(jax.lax.stop_gradient(3.0)) == 3.0
        """
    )
    assert result.returncode == 0, result.stderr


def test_install_after_real_jax_is_imported_says_what_to_do():
    result = _run(
        """
        import sys, types
        sys.modules["jax"] = types.ModuleType("jax")  # stands for JAX itself, imported
        import lamina.compat
        lamina.compat.install()
        """
    )
    assert result.returncode != 0
    assert "JAX itself is already imported" in result.stderr
    assert "python -m lamina.run" in result.stderr


def test_run_a_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import jax
            import jax.numpy as jnp
            print(jax.__version__, sys.argv[1:], float(jnp.sum(jnp.arange(4.0))))
            """
        )
    )
    result = _run("", "-m", "lamina.run", str(script), "--steps", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0.10.2 ['--steps', '3'] 6.0"
    assert lamina.__version__ == "0.1.0"
