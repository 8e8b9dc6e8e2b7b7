"""``lamina.ad_checkpoint``'s ``print_saved_residuals`` and the policy markers
``Saveable`` / ``Recompute`` / ``Offloadable``. Expected values recorded from JAX 0.10.2
(JAX also prints a column after each line number; lamina's source info has lines only)."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina.ad_checkpoint import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint_name,
    print_saved_residuals,
)

HERE = __file__


def f_sin_cos(x, y):
    return jnp.sin(x) * jnp.cos(y)


def g_sin_sin(x):
    return jnp.sum(jnp.sin(jnp.sin(x)))


def h_named(W, x):
    return jnp.sum(jnp.sin(checkpoint_name(jnp.dot(W, x), "a")))


def _at(fun):
    """Where its one-line body is (JAX adds a column: `file:line:col (name)`)."""
    return f"{HERE}:{fun.__code__.co_firstlineno + 1} ({fun.__name__})"


def _printed(capsys, f, *args, **kwargs):
    assert print_saved_residuals(f, *args, **kwargs) is None
    return capsys.readouterr().out.splitlines()


def test_residuals_of_plain_function(capsys):
    # recorded from JAX 0.10.2
    assert _printed(capsys, f_sin_cos, 1.0, 2.0) == [
        f"f32[] output of sin from {_at(f_sin_cos)}",
        f"f32[] output of cos from {_at(f_sin_cos)}",
        f"f32[] output of cos from {_at(f_sin_cos)}",
        f"f32[] output of sin from {_at(f_sin_cos)}",
    ]
    assert _printed(capsys, g_sin_sin, jnp.ones(3)) == [
        f"f32[3] output of cos from {_at(g_sin_sin)}",
        f"f32[3] output of cos from {_at(g_sin_sin)}",
    ]


def test_residuals_arguments_constants_and_kwargs(capsys):
    # recorded from JAX 0.10.2
    assert _printed(capsys, jax.checkpoint(g_sin_sin), jnp.ones(3)) == [
        "f32[3] from the argument x"
    ]
    assert _printed(capsys, lambda x, y=2.0: x * y, 3.0, y=4.0) == [
        "f32[] from the argument x",
        "f32[] from the argument y",
    ]
    lines = _printed(capsys, lambda d: jnp.sin(d["a"]) * d["b"], {"a": 1.0, "b": jnp.ones(2)})
    assert lines[0] == "f32[2] from the argument d['b']"
    assert [ln.split(" from ")[0] for ln in lines[1:]] == [
        "f32[] output of cos",
        "f32[] output of convert_element_type",
    ]
    c = jnp.arange(3.0)
    lines = _printed(capsys, lambda x: jnp.sin(x * c), jnp.ones(3))
    assert lines[0] == "f32[3] from a constant"
    assert lines[1].startswith("f32[3] output of cos from ")


def test_residuals_under_policies(capsys):
    W, x = jnp.ones((2, 3)), jnp.ones(3)
    # recorded from JAX 0.10.2
    assert _printed(capsys, h_named, W, x) == [
        "f32[2,3] from the argument W",
        "f32[3] from the argument x",
        f"f32[2] output of cos from {_at(h_named)}",
    ]
    names = jax.checkpoint(h_named, policy=jax.checkpoint_policies.save_only_these_names("a"))
    lines = _printed(capsys, names, W, x)
    assert lines[:2] == ["f32[2,3] from the argument W", "f32[3] from the argument x"]
    assert lines[2].startswith("f32[2] named 'a' from ")
    dots = jax.checkpoint(h_named, policy=jax.checkpoint_policies.dots_saveable)
    lines = _printed(capsys, dots, W, x)
    assert lines[2].startswith("f32[2] output of dot_general from ")


def _save(prim, *_, **__):
    return Saveable


def _recompute(prim, *_, **__):
    return Recompute


def _offload(prim, *_, **__):
    return Offloadable("device", "pinned_host")


def test_marker_types():
    # recorded from JAX 0.10.2: markers are truthy singletons, Offloadable a NamedTuple
    assert bool(Saveable) and bool(Recompute)
    off = Offloadable("device", "pinned_host")
    assert off == ("device", "pinned_host") and off._fields == ("src", "dst")
    assert repr(off) == "Offloadable(src='device', dst='pinned_host')"


@pytest.mark.parametrize("policy", [_save, _recompute, _offload])
def test_marker_policies_give_jax_gradients(policy):
    ckpt = jax.checkpoint(g_sin_sin, policy=policy)
    # recorded from JAX 0.10.2
    expected = np.full(3, 0.36003947, np.float32)
    np.testing.assert_allclose(jax.grad(ckpt)(jnp.ones(3)), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(ckpt))(jnp.ones(3)), expected, rtol=1e-6)


def test_marker_policies_decide_residuals(capsys):
    # recorded from JAX 0.10.2: Saveable saves like no checkpoint, Recompute keeps x only
    saved = _printed(capsys, jax.checkpoint(g_sin_sin, policy=_save), jnp.ones(3))
    assert [ln.split(" from ")[0] for ln in saved] == ["f32[3] output of cos"] * 2
    assert _printed(capsys, jax.checkpoint(g_sin_sin, policy=_recompute), jnp.ones(3)) == [
        "f32[3] from the argument x"
    ]
    # Offloadable values are saved (lamina has one memory space: not moved to host)
    offloaded = _printed(capsys, jax.checkpoint(g_sin_sin, policy=_offload), jnp.ones(3))
    assert len(offloaded) == 2


def test_bad_policy_results():
    with pytest.raises(TypeError, match="Value returned by a remat policy should be a bool"):
        jax.grad(jax.checkpoint(g_sin_sin, policy=lambda *_, **__: None))(jnp.ones(3))
    with pytest.raises(TypeError, match="instead of an instantiated"):
        jax.grad(jax.checkpoint(g_sin_sin, policy=lambda *_, **__: Offloadable))(jnp.ones(3))
    both = jax.checkpoint_policies.save_from_both_policies(_save, _recompute)
    with pytest.raises(ValueError, match="The return value of the policies should be a boolean"):
        jax.grad(jax.checkpoint(g_sin_sin, policy=both))(jnp.ones(3))


def test_offload_policies():
    cp = jax.checkpoint_policies
    with pytest.raises(ValueError, match="should not intersect"):
        cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"],
            names_which_can_be_offloaded=["a"],
            offload_src="device",
            offload_dst="pinned_host",
        )
    policy = cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"],
        names_which_can_be_offloaded=["b"],
        offload_src="device",
        offload_dst="pinned_host",
    )
    W, x = jnp.ones((2, 3)), jnp.arange(3.0)
    grads = jax.grad(jax.checkpoint(h_named, policy=policy))(W, x)
    np.testing.assert_allclose(grads, jax.grad(h_named)(W, x), rtol=1e-6)
    dots = cp.offload_dot_with_no_batch_dims("device", "pinned_host")
    grads = jax.grad(jax.checkpoint(h_named, policy=dots))(W, x)
    # recorded from JAX 0.10.2 (cos(3) for every entry)
    np.testing.assert_allclose(grads, np.full((2, 3), -0.9899925, np.float32) * x, rtol=1e-6)
