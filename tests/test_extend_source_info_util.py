"""lamina.extend.source_info_util: the name stack and source locations."""

import lamina as jax
from lamina.extend import source_info_util as siu


def test_name_stack_prints_as_in_jax():
    stack = siu.new_name_stack("a").transform("jvp").extend("b")
    # Recorded from JAX 0.10.2.
    assert str(stack) == "a/jvp(b)"
    assert repr(stack) == (
        "NameStack(stack=(Scope(name='a'), Transform(name='jvp'), Scope(name='b')))"
    )
    assert str(siu.new_name_stack()) == "" and len(stack) == 3


def test_named_scope_extends_the_current_stack():
    assert str(siu.current_name_stack()) == ""
    with jax.named_scope("outer"), siu.transform_name_stack("vmap"):
        with jax.named_scope("inner"):
            assert str(siu.current_name_stack()) == "outer/vmap(inner)"  # recorded
        with siu.reset_name_stack():
            assert str(siu.current_name_stack()) == ""
        with siu.set_name_stack(siu.new_name_stack("x")):
            assert str(siu.current_name_stack()) == "x"
    assert str(siu.current_name_stack()) == ""


def test_current_source_is_the_callers_line():
    info = siu.current()  # this line
    frame = info.traceback[0]
    assert (
        frame.file_name == __file__
        and frame.function_name == "test_current_source_is_the_callers_line"
    )
    assert siu.summarize(info).startswith(f"{__file__}:{frame.start_line}:")
    assert siu.new_source_info().traceback == ()
    with siu.user_context(info.traceback, name_stack=siu.new_name_stack("n")):
        inner = siu.current()
    assert inner.traceback == info.traceback and str(inner.name_stack) == "n"
