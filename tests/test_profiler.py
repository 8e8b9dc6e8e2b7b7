"""lamina.profiler on the assembled library: a trace of an annotated, jitted training
step read back, and named_scope / named_call names in the lowered module's locations and
in XLA's op names (recorded from JAX 0.10.2)."""

import re
from pathlib import Path

import numpy as np

import lamina as jax
import lamina.numpy as jnp

OP_NAME = re.compile(r'op_name="([^"]*)"')
LOC_NAME = re.compile(r'loc\("([^"]*)"\(')


def scoped(x):
    with jax.named_scope("layer1"):
        y = jnp.sin(x) * 2
    z = jax.named_call(lambda a: a + 1, name="inc")(y)
    return z.sum()


@jax.jit
def inner(x):
    with jax.named_scope("s"):
        return jnp.sin(x)


def outer(x):
    with jax.named_scope("outer"):
        y = inner(x)
    return jnp.cos(y)


def _op_names(jitted, *args) -> set[str]:
    return set(OP_NAME.findall(jitted.lower(*args).compile().as_text()))


def test_scopes_are_in_the_lowered_locations():
    text = jax.jit(scoped).lower(jnp.ones(3)).as_text(debug_info=True)
    names = {n for n in LOC_NAME.findall(text) if n.startswith("jit(")}
    # Recorded from JAX 0.10.2 (the named locations of its operations).
    assert names == {"jit(scoped)/layer1/sin", "jit(scoped)/layer1/mul", "jit(scoped)/inc/add",
                     "jit(scoped)/reduce_sum"}  # fmt: skip
    assert f'"{__file__}":' in text  # at the user's lines


def test_scopes_are_xla_op_names():
    names = {n for n in _op_names(jax.jit(scoped), jnp.ones(3)) if n.startswith("jit(")}
    # Recorded from JAX 0.10.2.
    assert names == {"jit(scoped)/layer1/sin", "jit(scoped)/layer1/mul", "jit(scoped)/inc/add",
                     "jit(scoped)/reduce_sum"}  # fmt: skip


def test_a_nested_jit_is_a_scope_of_its_caller():
    names = {n for n in _op_names(jax.jit(outer), jnp.ones(3)) if n.startswith("jit(")}
    # Recorded from JAX 0.10.2.
    assert names == {"jit(outer)/outer/jit(inner)/s/sin", "jit(outer)/cos"}


def scoped_loss(w):
    with jax.named_scope("layer"):
        h = jnp.tanh(w)
    return jnp.sum(h**2)


def value_and_step(w):
    v, g = jax.value_and_grad(scoped_loss)(w)
    return w - g, v


def _located(jitted, *args) -> set[str]:
    text = jitted.lower(*args).as_text(debug_info=True)
    return {n for n in LOC_NAME.findall(text) if "/" in n}


def test_transformations_wrap_the_names():
    # Recorded from JAX 0.10.2 (its named locations, less the bare "jit(f)").
    assert _located(jax.jit(value_and_step), jnp.ones(3)) == {
        "jit(value_and_step)/jvp()/integer_pow",
        "jit(value_and_step)/jvp()/mul",
        "jit(value_and_step)/jvp()/reduce_sum",
        "jit(value_and_step)/jvp(layer)/sub",
        "jit(value_and_step)/jvp(layer)/tanh",
        "jit(value_and_step)/sub",
        "jit(value_and_step)/transpose(jvp())/broadcast_in_dim",
        "jit(value_and_step)/transpose(jvp())/mul",
        "jit(value_and_step)/transpose(jvp(layer))/add_any",
        "jit(value_and_step)/transpose(jvp(layer))/mul",
    }
    batched = jax.jit(jax.vmap(scoped_loss))
    assert _located(batched, jnp.ones((2, 3))) == {
        "jit(scoped_loss)/vmap()/integer_pow",
        "jit(scoped_loss)/vmap()/reduce_sum",
        "jit(scoped_loss)/vmap(layer)/tanh",
    }


def loss(w, x, y):
    with jax.named_scope("dense"):
        h = jnp.tanh(x @ w)
    with jax.named_scope("mse"):
        return jnp.mean((h - y) ** 2)


@jax.jit
def train_step(w, x, y):
    value, grad = jax.value_and_grad(loss)(w, x, y)
    return w - 0.1 * grad, value


def test_trace_of_a_training_step(tmp_path):
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.standard_normal((64, 8), np.float32))
    x = jnp.asarray(rng.standard_normal((128, 64), np.float32))
    y = jnp.zeros((128, 8))
    with jax.profiler.trace(tmp_path, create_perfetto_trace=True):
        for step in range(3):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                w, value = train_step(w, x, y)
                value.block_until_ready()
    (path,) = Path(tmp_path).glob("plugins/profile/*/*.xplane.pb")
    assert list(Path(tmp_path).glob("plugins/profile/*/perfetto_trace.json.gz"))
    events: dict[str, list[float]] = {}
    kernels = 0
    for plane in jax.profiler.ProfileData.from_file(str(path)).planes:
        for line in plane.lines:
            for event in line.events:
                events.setdefault(event.name, []).append(event.duration_ns)
                kernels += "fusion" in event.name
    assert len(events["train"]) == 3
    for name in ("trace: train_step", "lower: jit(train_step)", "compile: jit(train_step)"):
        assert len(events[name]) == 1, name
    calls = events["PjitFunction(train_step)"]  # jaxlib's C++ dispatch, one per call
    assert len(calls) >= 3
    # The first step traces and compiles; the later ones only dispatch.
    assert events["train"][0] >= events["compile: jit(train_step)"][0] > 0
    assert max(events["train"][1:]) < events["train"][0]
    assert kernels >= 3  # XLA's executed kernels are on the timeline too
    # Recorded from JAX 0.10.2: the compiled step's op names.
    assert {n for n in _op_names(train_step, w, x, y) if "/" in n} == {
        "jit(train_step)/jvp(dense)/dot_general",
        "jit(train_step)/jvp(dense)/sub",
        "jit(train_step)/jvp(dense)/tanh",
        "jit(train_step)/jvp(mse)/div",
        "jit(train_step)/jvp(mse)/integer_pow",
        "jit(train_step)/jvp(mse)/reduce_sum",
        "jit(train_step)/jvp(mse)/sub",
        "jit(train_step)/mul",
        "jit(train_step)/sub",
        "jit(train_step)/transpose(jvp(dense))/add_any",
        "jit(train_step)/transpose(jvp(dense))/mul",
        "jit(train_step)/transpose(jvp(dense))/transpose",
        "jit(train_step)/transpose(jvp(mse))/mul;"
        "jit(train_step)/transpose(jvp(mse))/broadcast_in_dim",
    }
