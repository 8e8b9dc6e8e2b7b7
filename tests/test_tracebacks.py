"""Traceback filtering: exceptions leaving lamina show the user's frames and the line
that raised, not lamina's internals (JAX's jax_traceback_filtering)."""

import os
import subprocess
import sys
import traceback

import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import lax
from lamina.ir import UnfilteredStackTrace, is_lamina_file

# Recorded from JAX 0.10.2 (message, and the note its boundary adds).
DOT_MESSAGE = (
    "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."
)
NOTE = (
    "--------------------\n"
    "For simplicity, JAX has removed its internal frames from the traceback of the following "
    "exception. Set JAX_TRACEBACK_FILTERING=off to include these."
)
HERE = os.path.abspath(__file__)


@pytest.fixture
def filtering():
    def set_mode(mode):
        jax.config.update("jax_traceback_filtering", mode)

    yield set_mode
    jax.config.update("jax_traceback_filtering", "auto")


def _frames(exc):
    return [
        (os.path.abspath(f.f_code.co_filename), f.f_code.co_name)
        for f, _ in traceback.walk_tb(exc.__traceback__)
    ]


def _user_dot():
    return jnp.dot(jnp.ones((2, 3)), jnp.ones((4, 5)))


def test_shape_error_in_jnp_dot_shows_the_users_frames():
    with pytest.raises(TypeError) as info:
        _user_dot()
    frames = _frames(info.value)
    assert frames[0] == (HERE, "test_shape_error_in_jnp_dot_shows_the_users_frames")
    assert frames[1] == (HERE, "_user_dot")
    assert len(frames) == 3 and is_lamina_file(frames[2][0])  # the line that raised
    assert str(info.value) == DOT_MESSAGE
    assert info.value.__notes__ == [NOTE]


@pytest.mark.parametrize(
    "call",
    [
        lambda: jax.jit(lambda x: jnp.dot(x, x))(jnp.ones((2, 3))),
        lambda: jax.grad(lambda x: jnp.sum(x[:2] * x))(jnp.ones(3)),
        lambda: jax.vmap(lambda x: x @ jnp.ones(4))(jnp.ones((2, 3))),
        lambda: jax.make_jaxpr(lambda x: lax.add(x, jnp.ones(2)))(jnp.ones(3)),
        lambda: jnp.ones(2) + jnp.ones(3),
        lambda: jnp.reshape(jnp.ones(8), (3, 3)),
    ],
    ids=["jit", "grad", "vmap", "make_jaxpr", "operator", "jnp.reshape"],
)
def test_only_the_raising_frame_of_lamina_is_left(call):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    ours = [i for i, (name, _) in enumerate(_frames(info.value)) if is_lamina_file(name)]
    assert ours == [len(_frames(info.value)) - 1]  # lamina's: only the innermost frame


def test_lax_functions_keep_their_own_frame():
    # lax's functions are no boundaries (lamina.numpy calls them on every operation);
    # Primitive.bind below them is.
    with pytest.raises(TypeError) as info:
        lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 5)), (((1,), (0,)), ((), ())))
    frames = _frames(info.value)
    assert [is_lamina_file(name) for name, _ in frames] == [False, True, True]
    assert frames[1][1] == "dot_general"
    assert info.value.__notes__ == [NOTE]


def test_errors_in_user_code_under_jit_show_only_user_frames():
    def f(x):
        return x / 0 if isinstance(x, int) else 1 / 0

    with pytest.raises(ZeroDivisionError) as info:
        jax.jit(f)(1.0)
    assert [name for _, name in _frames(info.value)] == [
        "test_errors_in_user_code_under_jit_show_only_user_frames",
        "f",
    ]
    assert info.value.__notes__ == [NOTE]


def test_off_keeps_every_frame(filtering):
    filtering("off")
    with pytest.raises(TypeError) as info:
        _user_dot()
    assert sum(is_lamina_file(name) for name, _ in _frames(info.value)) > 5
    assert not hasattr(info.value, "__notes__")


def test_remove_frames_keeps_the_whole_trace_as_the_cause(filtering):
    filtering("remove_frames")
    with pytest.raises(TypeError) as info:
        _user_dot()
    assert len(_frames(info.value)) == 3
    cause = info.value.__cause__
    assert isinstance(cause, UnfilteredStackTrace)
    assert str(cause) == (
        f"TypeError: {DOT_MESSAGE}\n\nThe stack trace below excludes JAX-internal frames.\n"
        "The preceding is the original exception that occurred, unmodified.\n\n--------------------"
    )
    assert sum(is_lamina_file(name) for name, _ in _frames(cause)) > 5


def test_tracebackhide_marks_lamina_frames(filtering):
    filtering("tracebackhide")
    with pytest.raises(TypeError) as info:
        _user_dot()
    entries = list(traceback.walk_tb(info.value.__traceback__))
    hidden = [f.f_locals.get("__tracebackhide__", False) for f, _ in entries]
    ours = [is_lamina_file(f.f_code.co_filename) for f, _ in entries]
    assert hidden == ours and any(ours)


def test_bad_mode_is_refused():
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError) as info:
        jax.config.update("jax_traceback_filtering", "bad")
    assert str(info.value) == (
        "new enum value must be in ['off', 'tracebackhide', 'remove_frames', "
        "'quiet_remove_frames', 'auto'], got bad of type <class 'str'>."
    )


def test_printed_traceback_and_the_environment_variable():
    program = "import lamina.numpy as jnp\njnp.dot(jnp.ones((2, 3)), jnp.ones((4, 5)))\n"

    def run(mode):
        env = {**os.environ, "JAX_TRACEBACK_FILTERING": mode}
        result = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, env=env
        )
        return result.stderr

    printed = run("auto")
    assert printed.count('  File "') == 2  # the program's line and the raising one
    assert printed.rstrip().endswith(f"TypeError: {DOT_MESSAGE}\n{NOTE}")
    assert run("off").count('  File "') > 5
