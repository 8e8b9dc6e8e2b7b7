"""`lamina.errors` holds every class of `jax.errors` (JAX 0.10.2), with its hierarchy."""

import numpy as np
import pytest

import lamina as jax
from lamina.ir import Jaxpr, ShapedArray, Var, check_jaxpr

# dir(jax.errors) in JAX 0.10.2, and each class's public ancestors (its __mro__ without
# JAX's private mixin and object), recorded from that JAX.
JAX_ERRORS = {
    "ConcretizationTypeError": ["JAXTypeError", "TypeError", "Exception", "BaseException"],
    "InconclusiveDimensionOperation": ["Exception", "BaseException"],
    "JAXIndexError": ["IndexError", "LookupError", "Exception", "BaseException"],
    "JAXTypeError": ["TypeError", "Exception", "BaseException"],
    "JaxRuntimeError": ["RuntimeError", "Exception", "BaseException"],
    "JaxprTypeError": ["TypeError", "Exception", "BaseException"],
    "KeyReuseError": ["JAXTypeError", "TypeError", "Exception", "BaseException"],
    "NonConcreteBooleanIndexError": [
        "JAXIndexError",
        "IndexError",
        "LookupError",
        "Exception",
        "BaseException",
    ],
    "TracerArrayConversionError": ["JAXTypeError", "TypeError", "Exception", "BaseException"],
    "TracerBoolConversionError": [
        "ConcretizationTypeError",
        "JAXTypeError",
        "TypeError",
        "Exception",
        "BaseException",
    ],
    "TracerIntegerConversionError": ["JAXTypeError", "TypeError", "Exception", "BaseException"],
    "UnexpectedTracerError": ["JAXTypeError", "TypeError", "Exception", "BaseException"],
}


def test_every_name_of_jax_errors():
    assert sorted(jax.errors.__all__) == sorted(JAX_ERRORS)
    namespace: dict = {}
    exec("from lamina.errors import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(JAX_ERRORS)


@pytest.mark.parametrize("name", sorted(JAX_ERRORS))
def test_class_hierarchy_as_jax(name):
    cls = getattr(jax.errors, name)
    ancestors = [c.__name__ for c in cls.__mro__[1:] if not c.__name__.startswith("_")]
    assert [a for a in ancestors if a != "object"] == JAX_ERRORS[name]
    for ancestor in JAX_ERRORS[name]:
        if hasattr(jax.errors, ancestor):
            assert issubclass(cls, getattr(jax.errors, ancestor))


def test_runtime_failure_raises_jax_runtime_error():
    # As in JAX, the class is jaxlib's own (the one XLA's runtime raises), not a copy.
    assert jax.errors.JaxRuntimeError.__module__ == "jaxlib._jax"
    x = jax.device_put(np.arange(3.0, dtype=np.float32))
    x.delete()
    with pytest.raises(jax.errors.JaxRuntimeError, match="INVALID_ARGUMENT"):
        jax.jit(lambda a: a * 2)(x)


def test_check_jaxpr_raises_jaxpr_type_error():
    unbound = Var(ShapedArray((), np.float32))
    with pytest.raises(jax.errors.JaxprTypeError, match="used before it is bound"):
        check_jaxpr(Jaxpr([], [], [unbound], []))
    with pytest.raises(TypeError):
        check_jaxpr(Jaxpr([], [], [unbound], []))


def test_messages_as_jax():
    # JAX's JAXTypeError subclasses end their message with a link to the error's page.
    assert str(jax.errors.KeyReuseError("boom")) == (
        "boom\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.KeyReuseError"
    )
    assert str(jax.errors.InconclusiveDimensionOperation("boom")) == "boom"
    with pytest.raises(TypeError, match="KeyReuseError"):
        raise jax.errors.KeyReuseError("key used twice")


def test_tracer_errors_are_caught_as_their_jax_bases():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda a: 1 if a > 0 else 0)(1.0)
    with pytest.raises(jax.errors.JAXTypeError):
        jax.jit(lambda a: np.asarray(a))(1.0)
