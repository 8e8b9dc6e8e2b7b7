"""Traces, tracers, bind and the conversion errors."""

import numpy as np
import pytest
import tracing_prims as P

from lamina.interpreters import errors, tracing
from lamina.interpreters.jaxprs.trace_api import make_jaxpr
from lamina.ir import MissingRuleError

methods = P.methods
x3 = np.ones(3, np.float32)


def test_eval_trace_is_the_default_and_runs_impl_rules():
    assert tracing.find_current_trace() is tracing.eval_trace
    np.testing.assert_allclose(P.mul(x3, 2.0), 2 * x3)
    assert P.split_p.bind(x3)[1] is x3


def test_missing_impl_rule_names_the_primitive():
    with pytest.raises(MissingRuleError, match="no_rules"):
        P.nothing_p.bind(x3)


def test_set_and_take_current_trace():
    class Recorder(tracing.Trace):
        def __init__(self):
            super().__init__()
            self.seen = []

        def process_primitive(self, primitive, args, params):
            self.seen.append(primitive.name)
            return args[0]

    rec = Recorder()
    with tracing.set_current_trace(rec):
        assert P.sin(1.0) == 1.0
        with tracing.take_current_trace() as taken:
            assert taken is rec
            with pytest.raises(RuntimeError, match="take_current_trace"):
                P.sin(1.0)
    assert rec.seen == ["sin"]
    assert tracing.find_current_trace() is tracing.eval_trace


def test_trace_hooks_name_the_trace():
    with pytest.raises(NotImplementedError, match="Trace"):
        tracing.Trace().process_primitive(P.sin_p, (), {})
    with pytest.raises(NotImplementedError, match="EvalTrace does not support custom_jvp"):
        tracing.eval_trace.process_custom_jvp_call(None, None, None, (), symbolic_zeros=False)


def test_tracer_attributes_and_repr(methods):
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, weak=x.weak_type)
        seen["repr"] = repr(x)
        seen["len"] = len(x)
        return x

    make_jaxpr(f)(np.ones((2, 3), np.float32))
    assert seen == dict(
        shape=(2, 3),
        dtype=np.float32,
        ndim=2,
        size=6,
        weak=False,
        len=2,
        repr="JitTracer(float32[2,3])",
    )
    make_jaxpr(lambda x: seen.update(r=repr(x)))(1.0)
    assert seen["r"] == "JitTracer(~float32[])"


def test_tracer_unsized_len_iter_hash():
    def check(x):
        with pytest.raises(TypeError, match=r"len\(\) of unsized object"):
            len(x)
        with pytest.raises(TypeError, match="iteration over a 0-d array"):
            iter(x)
        with pytest.raises(TypeError, match="unhashable type: 'DynamicJaxprTracer'"):
            hash(x)
        return x

    make_jaxpr(check)(1.0)


def test_missing_operator_is_a_clear_type_error(monkeypatch):
    # In the workspace environment lamina.lax may have filled the table; empty it here.
    monkeypatch.setattr(tracing, "array_methods", {})

    def f(x):
        with pytest.raises(TypeError, match=r"'__add__'.*array_methods"):
            x + 1
        with pytest.raises(AttributeError, match="no attribute 'frobnicate'"):
            x.frobnicate  # noqa: B018
        return x

    make_jaxpr(f)(1.0)


def test_operators_and_methods_forward_to_the_table(methods):
    def f(x):
        return (2.0 * x + np.float32(1)).sum()

    jaxpr = make_jaxpr(f)(x3)
    assert [e.primitive.name for e in jaxpr.eqns] == ["mul", "add", "reduce_sum"]


def test_iteration_uses_getitem(methods):
    tracing.array_methods["__getitem__"] = lambda x, i: P.sin(x)
    jaxpr = make_jaxpr(lambda x: list(x))(np.ones((2, 3), np.float32))
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "sin"]


def test_bool_on_tracer(methods):
    def f(x):
        if x.sum() > 0:  # the line the message names
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        make_jaxpr(f)(x3)
    msg = str(info.value)
    assert "Attempted boolean conversion of traced array with shape bool[]" in msg
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in msg
    for hint in ("lax.cond", "jnp.where", "static_argnums"):
        assert hint in msg
    assert isinstance(info.value, errors.ConcretizationTypeError)
    assert isinstance(info.value, TypeError)


def test_python_control_flow_on_concrete_values(methods):
    x = np.ones(3, np.float32)
    assert (-x if (x.sum() > 0) else x).sum() == -3  # eager: plain values


@pytest.mark.parametrize("conv", [int, float, complex])
def test_scalar_conversions(conv):
    with pytest.raises(errors.ConcretizationTypeError) as info:
        make_jaxpr(lambda x: conv(x))(1.0)
    msg = str(info.value)
    assert "Abstract tracer value encountered where concrete value is expected" in msg
    assert f"`{conv.__name__}` function" in msg and "astype" in msg
    assert "static_argnums" in msg and __file__ in msg
    assert type(info.value) is errors.ConcretizationTypeError


def test_index_conversion():
    with pytest.raises(errors.TracerIntegerConversionError) as info:
        make_jaxpr(lambda i: [1, 2, 3][i])(1)
    assert "The __index__() method was called on traced array with shape int32[]" in str(info.value)
    assert not isinstance(info.value, errors.ConcretizationTypeError)


def test_array_conversion():
    with pytest.raises(errors.TracerArrayConversionError) as info:
        make_jaxpr(lambda x: np.sin(x))(x3)
    msg = str(info.value)
    assert "__array__() was called on traced array with shape float32[3]" in msg
    assert "lamina.numpy" in msg and __file__ in msg


def test_error_hierarchy():
    E = errors
    assert issubclass(E.TracerBoolConversionError, E.ConcretizationTypeError)
    for cls in (
        E.ConcretizationTypeError,
        E.TracerArrayConversionError,
        E.TracerIntegerConversionError,
        E.UnexpectedTracerError,
    ):
        assert issubclass(cls, E.JAXTypeError) and issubclass(cls, TypeError)
    assert issubclass(E.JAXIndexError, IndexError)
    assert "errors.html#jax.errors.UnexpectedTracerError" in str(E.UnexpectedTracerError("m"))


def _leak():
    leaked = []

    def f(x):
        leaked.append(P.sin_p.bind(x))  # created here
        return x

    make_jaxpr(f)(1.0)
    return leaked[0], f.__code__.co_firstlineno + 1


def test_leaked_tracer_used_eagerly():
    tracer, line = _leak()
    with pytest.raises(errors.UnexpectedTracerError) as info:
        P.mul(tracer, 2.0)
    msg = str(info.value)
    assert "float32[]" in msg and "DynamicJaxprTracer" in msg
    assert f"{__file__}:{line}" in msg and "return the value" in msg


def test_leaked_tracer_used_in_another_trace():
    tracer, _ = _leak()
    with pytest.raises(errors.UnexpectedTracerError):
        make_jaxpr(lambda y: P.mul(y, tracer))(1.0)


def test_bind_is_thread_and_context_local():
    import threading

    results = []

    def g(x):
        # another thread sees the eval trace, not this thread's staging trace
        t = threading.Thread(target=lambda: results.append(tracing.find_current_trace()))
        t.start()
        t.join()
        return x

    make_jaxpr(g)(1.0)
    assert results == [tracing.eval_trace]
