"""Exports with symbolic shapes: their fields and module, serialization round trips,
calls on arrays of several shapes (eagerly, in jit, from a polymorphic caller, under
grad through the polymorphic VJP, under vmap) and JAX 0.10.2's errors for wrong
shapes (messages recorded from it)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from lamina import export
from lamina.interpreters import ShapeDtypeStruct, grad, jit, vmap
from lamina.lax import add, convert_element_type, mul, reduce_sum, reshape, sin

F32 = np.float32
_SPEC = "args[0].shape = (b, n)"
_SOLVED = (
    "Obtained dimension variables: 'b' = 2 from specification 'b' for dimension "
    "args[0].shape[0] (= 2), 'n' = 3 from specification 'n' for dimension "
    "args[0].shape[1] (= 3), ."
)


def _scaled_sin(x):  # sin(x) * b
    return mul(sin(x), convert_element_type(x.shape[0], F32))


def _spec_exp():
    specs = export.symbolic_args_specs((np.zeros((3, 4), F32),), "b, n")
    return export.export(jit(_scaled_sin))(*specs)


def _x(*shape):
    return np.arange(np.prod(shape), dtype=F32).reshape(shape) / 7


def test_fields_and_module_are_polymorphic():
    exp = _spec_exp()
    assert [a.str_short() for a in exp.in_avals] == ["float32[b,n]"]
    assert [a.str_short() for a in exp.out_avals] == ["float32[b,n]"]
    assert exp.uses_global_constants
    module = exp.mlir_module()
    assert "jax.uses_shape_polymorphism = true" in module
    assert "@main(%arg0: tensor<?x?xf32>" in module
    assert "@shape_assertion" in module


def test_serialization_keeps_symbolic_shapes():
    blob = bytes(_spec_exp().serialize(vjp_order=1))
    back = export.deserialize(blob)
    assert [a.str_short() for a in back.in_avals] == ["float32[b,n]"]
    (b, n) = back.in_avals[0].shape
    assert back.out_avals[0].shape == (b, n)  # one scope for all shapes
    assert [a.str_short() for a in back.vjp().in_avals] == ["float32[b,n]", "float32[b,n]"]
    assert bytes(back.serialize(vjp_order=1)) == blob


@pytest.mark.parametrize("shape", [(2, 3), (5, 1), (1, 4)])
def test_calls_at_several_shapes(shape):
    exp = export.deserialize(_spec_exp().serialize(vjp_order=1))
    x = _x(*shape)
    want = np.sin(x) * shape[0]
    np.testing.assert_allclose(exp.call(x), want, rtol=1e-6)
    np.testing.assert_allclose(jit(exp.call)(x), want, rtol=1e-6)
    g = grad(lambda x: reduce_sum(exp.call(x), (0, 1)))(x)
    np.testing.assert_allclose(g, np.cos(x) * shape[0], rtol=1e-5)


def test_vjp_is_polymorphic():
    vjp = _spec_exp().vjp()
    assert [a.str_short() for a in vjp.in_avals] == ["float32[b,n]", "float32[b,n]"]
    assert [a.str_short() for a in vjp.out_avals] == ["float32[b,n]"]
    x, ct = _x(3, 2), np.ones((3, 2), F32)
    np.testing.assert_allclose(vjp.call(x, ct)[0], np.cos(x) * 3, rtol=1e-5)


def test_called_from_a_polymorphic_export():
    inner = _spec_exp()
    specs = export.symbolic_args_specs((np.zeros((3, 4), F32),), "b, n")
    outer = export.export(jit(lambda x: mul(inner.call(x), F32(2))))(*specs)
    assert [a.str_short() for a in outer.out_avals] == ["float32[b,n]"]
    outer = export.deserialize(outer.serialize())
    for shape in [(2, 3), (4, 4)]:
        x = _x(*shape)
        np.testing.assert_allclose(outer.call(x), np.sin(x) * shape[0] * 2, rtol=1e-6)


def test_symbolic_result_shapes_follow_the_arguments():
    def f(x):
        return reshape(x, (x.shape[0] * 2, x.shape[1] // 2))

    exp = export.export(jit(f))(ShapeDtypeStruct(export.symbolic_shape("b, 2*n"), F32))
    assert [a.str_short() for a in exp.out_avals] == ["float32[2*b,n]"]
    x = _x(3, 4)
    np.testing.assert_array_equal(exp.call(x), x.reshape(6, 2))


def test_constraints_are_checked_at_call_time():
    shape = export.symbolic_shape("a, b", constraints=("a >= b",))

    def f(x):
        return reduce_sum(x, (1,))

    exp = export.export(jit(f))(ShapeDtypeStruct(shape, F32))
    np.testing.assert_allclose(exp.call(_x(3, 2)), _x(3, 2).sum(1), rtol=1e-6)
    # recorded from JAX 0.10.2
    msg = (
        "Input shapes do not match the symbolic shape constraint a >= b. Expected '- b + a' "
        "to be greater or equal to 0, but found -1.  Using the following polymorphic shapes "
        "specifications: args[0].shape = (a, b). Obtained dimension variables: 'a' = 2 from "
        "specification 'a' for dimension args[0].shape[0] (= 2), 'b' = 3 from specification "
        "'b' for dimension args[0].shape[1] (= 3), . Please see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for "
        "more details."
    )
    for call in (exp.call, jit(exp.call)):
        with pytest.raises(ValueError) as e:
            call(np.zeros((2, 3), F32))
        assert str(e.value) == msg


def _two_sums(x, y):
    return add(reduce_sum(x, (0,)), reduce_sum(y, (0,)))


def _solved(a, b):
    return (
        f"Using the following polymorphic shapes specifications: args[0].shape = (a,),"
        f"args[1].shape = (b,). Obtained dimension variables: 'a' = {a} from specification "
        f"'a' for dimension args[0].shape[0] (= {a}), 'b' = {b} from specification 'b' for "
        f"dimension args[1].shape[0] (= {b}), . Please see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for "
        "more details."
    )


@pytest.mark.parametrize(
    "constraint, good, bad, head",
    [  # recorded from JAX 0.10.2
        (
            "mod(a, 2) == 0",
            (4, 3),
            (5, 3),
            "Input shapes do not match the symbolic shape constraint 2*floordiv(a, 2) == a. "
            "Expected '2*floordiv(a, 2) - a' to be equal to 0, but found -1. ",
        ),
        (
            "floordiv(a, 2) == b",
            (5, 2),
            (6, 2),
            "Input shapes do not match the symbolic shape constraint floordiv(a, 2) == b. "
            "Expected 'floordiv(a, 2) - b' to be equal to 0, but found 1. ",
        ),
        (
            "max(a, b) == a",
            (4, 2),
            (1, 2),
            "Input shapes do not match the symbolic shape constraint max(a, b) == a. "
            "Expected 'max(a, b) - a' to be equal to 0, but found 1. ",
        ),
    ],
)
def test_equality_constraints_are_checked_at_call_time(constraint, good, bad, head):
    a, b = export.symbolic_shape("a, b", constraints=(constraint,))
    specs = (ShapeDtypeStruct((a,), F32), ShapeDtypeStruct((b,), F32))
    exp = export.export(jit(_two_sums))(*specs)
    # One shape_assertion per dimension variable (>= 1) and per checked equality.
    assert exp.mlir_module().count("@shape_assertion(") == (4 if "mod" in constraint else 3)
    np.testing.assert_allclose(exp.call(np.ones(good[0], F32), np.ones(good[1], F32)), sum(good))
    for call in (exp.call, jit(exp.call)):
        with pytest.raises(ValueError) as e:
            call(np.ones(bad[0], F32), np.ones(bad[1], F32))
        assert str(e.value) == head + " " + _solved(*bad)


def test_an_equality_the_shapes_imply_is_not_checked():
    # Recorded from JAX 0.10.2: with a == b, a is written b everywhere, so no check is
    # left for the constraint itself; a mismatch is an inconsistent specification.
    a, b = export.symbolic_shape("a, b", constraints=("a == b",))
    exp = export.export(jit(_two_sums))(ShapeDtypeStruct((a,), F32), ShapeDtypeStruct((b,), F32))
    assert exp.mlir_module().count("@shape_assertion(") == 2
    with pytest.raises(ValueError, match=r"Found inconsistency between dimension size args\[1\]"):
        exp.call(np.ones(3, F32), np.ones(4, F32))


def test_wrong_shapes_raise_jax_s_errors():
    exp = export.export(jit(lambda x, y: mul(x, y)))(
        *export.symbolic_args_specs((np.zeros((2, 3), F32),) * 2, "b, n")
    )
    # recorded from JAX 0.10.2
    cases = [
        ((np.zeros((2, 3), F32), np.zeros((3, 3), F32)),
         "Input shapes do not match the polymorphic shapes specification. Found "
         "inconsistency between dimension size args[1].shape[0] (= 3) and the specification "
         f"'b' (= 2). Using the following polymorphic shapes specifications: {_SPEC},{_SPEC}"
         f"[1:]. {_SOLVED} Please see "
         "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for "
         "more details."),
        ((np.zeros((0, 3), F32), np.zeros((0, 3), F32)),
         "Input shapes do not match the polymorphic shapes specification. Expected value >= "
         f"1 for dimension variable 'b'. Using the following polymorphic shapes specifications: "
         f"{_SPEC},{_SPEC}[1:]. Obtained dimension variables: 'b' = 0 from specification 'b' "
         "for dimension args[0].shape[0] (= 0), . Please see "
         "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for "
         "more details."),
        ((np.zeros((2,), F32), np.zeros((2, 3), F32)),
         "Rank mismatch for args[0]: expected (b, n) and called with (2,)"),
        ((np.zeros((2, 3), np.int32), np.zeros((2, 3), F32)),
         "Dtype mismatch for args[0]: expected float32 and called with int32"),
    ]  # fmt: skip
    for args, msg in cases:
        msg = msg.replace(f"{_SPEC}[1:]", "args[1].shape = (b, n)")
        for call in (exp.call, jit(exp.call)):
            with pytest.raises(ValueError) as e:
                call(*args)
            assert str(e.value) == msg


def test_vmap_of_a_batch_polymorphic_export():
    # JAX 0.10.2 raises NotImplementedError ("Batching rule for 'call_exported' not
    # implemented"); lamina runs the module once per element of the vmapped axis.
    exp = _spec_exp()
    xs = _x(4, 2, 3)
    want = np.sin(xs) * 2
    np.testing.assert_allclose(vmap(exp.call)(xs), want, rtol=1e-6)
    np.testing.assert_allclose(jit(vmap(exp.call, in_axes=1))(xs.transpose(1, 0, 2)), want,
                               rtol=1e-6)  # fmt: skip
    g = vmap(grad(lambda x: reduce_sum(exp.call(x), (0, 1))))(xs)
    np.testing.assert_allclose(g, np.cos(xs) * 2, rtol=1e-5)


def test_errors_name_arguments_by_their_pytree_path():
    d = {"a": np.zeros((2, 3), F32), "b": np.zeros((2,), F32)}
    specs = export.symbolic_args_specs((d,), ({"a": "b, n", "b": "b"},))

    def f(d, *, y):
        return mul(reduce_sum(d["a"], (1,)), mul(d["b"], y))

    exp = export.export(jit(f))(*specs, y=F32(2))
    assert [a.str_short() for a in exp.out_avals] == ["float32[b]"]
    got = exp.call({"a": np.ones((4, 3), F32), "b": np.ones((4,), F32)}, y=F32(2))
    np.testing.assert_allclose(got, np.full(4, 6, F32))
    # recorded from JAX 0.10.2: only the arguments with symbolic shapes are listed
    msg = (
        "Input shapes do not match the polymorphic shapes specification. Found inconsistency "
        "between dimension size args[0]['b'].shape[0] (= 3) and the specification 'b' (= 2). "
        "Using the following polymorphic shapes specifications: args[0]['a'].shape = (b, n),"
        "args[0]['b'].shape = (b,). Obtained dimension variables: 'b' = 2 from specification "
        "'b' for dimension args[0]['a'].shape[0] (= 2), 'n' = 3 from specification 'n' for "
        "dimension args[0]['a'].shape[1] (= 3), . Please see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for "
        "more details."
    )
    for call in (exp.call, jit(exp.call)):
        with pytest.raises(ValueError) as e:
            call({"a": np.zeros((2, 3), F32), "b": np.zeros((3,), F32)}, y=F32(2))
        assert str(e.value) == msg


def test_vjp_with_integer_arguments():
    # the VJP takes a float0 cotangent of symbolic shape for the integer result
    def f(x, i):
        return mul(x, convert_element_type(i, F32)), mul(i, np.int32(2))

    specs = export.symbolic_args_specs((np.zeros(3, F32), np.zeros(3, np.int32)), "b")
    exp = export.deserialize(export.export(jit(f))(*specs).serialize(vjp_order=1))
    assert [a.shape for a in exp.vjp().in_avals] == [exp.in_avals[0].shape] * 4
    x, i = np.arange(4, dtype=F32), np.arange(4, dtype=np.int32)
    for g in (grad(lambda x: reduce_sum(exp.call(x, i)[0], (0,))),):
        np.testing.assert_array_equal(g(x), i.astype(F32))
        np.testing.assert_array_equal(jit(g)(x), i.astype(F32))


def _signatures(text):
    """The module's function and call lines, without locations."""
    lines = [line for line in text.splitlines() if "func.func" in line or "= call @" in line]
    return [re.sub(r" loc\([^()]*(\([^()]*\))?[^()]*\)", "", line).strip() for line in lines]


@pytest.mark.parametrize("platforms", [None, ("cpu", "cuda")])
def test_main_wraps_the_function_as_jax_s(platforms):
    # Recorded from JAX 0.10.2: main computes and checks the dimension variables (none
    # for the constant dimension), then calls _wrapped_jax_export_main with their values.
    (b,) = export.symbolic_shape("b")
    exp = export.export(jit(sin), platforms=platforms)(ShapeDtypeStruct((b, 2), F32))
    main = "func.func public @main("
    wrapped = "func.func private @_wrapped_jax_export_main("
    result = ') -> (tensor<?x2xf32> {jax.result_info = "result"}) {'
    if platforms is None:
        want = [
            main + "%arg0: tensor<?x2xf32>" + result,
            "%2 = call @_wrapped_jax_export_main(%0, %arg0) : (tensor<i32>, tensor<?x2xf32>) "
            "-> tensor<?x2xf32>",
            wrapped
            + '%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<?x2xf32>'
            + result,
        ]
    else:
        index = '%arg0: tensor<i32> {jax.global_constant = "_platform_index"}'
        want = [
            main + index + ", %arg1: tensor<?x2xf32>" + result,
            "%2 = call @_wrapped_jax_export_main(%arg0, %0, %arg1) : (tensor<i32>, "
            "tensor<i32>, tensor<?x2xf32>) -> tensor<?x2xf32>",
            wrapped + index + ', %arg1: tensor<i32> {jax.global_constant = "b"}, '
            "%arg2: tensor<?x2xf32>" + result,
        ]
    text = exp.mlir_module()
    assert _signatures(text) == want
    assert text.count("@shape_assertion(") == 1
    np.testing.assert_allclose(exp.call(_x(3, 2)), np.sin(_x(3, 2)), rtol=1e-6)


def test_a_constraint_on_a_variable_no_shape_names_is_jax_s_error():
    # Recorded from JAX 0.10.2 (its UnexpectedDimVar, raised at export).
    a, _ = export.symbolic_shape("a, b", constraints=("a >= b",))
    with pytest.raises(Exception) as e:
        export.export(jit(sin))(ShapeDtypeStruct((a,), F32))
    assert type(e.value).__name__ == "UnexpectedDimVar"
    assert str(e.value) == (
        "Encountered dimension variable 'b' that is not appearing in the shapes of the "
        "function arguments.\nThe following dimension variables are appearing in the shapes "
        "of the function arguments: ['a'].\nPlease see https://docs.jax.dev/en/latest/export/"
        "shape_poly.html#dimension-variables-must-be-solvable-from-the-input-shapes for more "
        "details."
    )


_TEXTS = json.loads((Path(__file__).parent / "data" / "jax_module_texts.json").read_text())


def _sin_twice_plus(x, y):
    return add(mul(sin(x), 2.0), y)


def _module_lines(exp):
    text = re.sub(r'error_message = "[^"]*"', 'error_message = "..."', exp.mlir_module())
    return text.splitlines()


def test_polymorphic_module_text_is_jax_s():
    (a,) = export.symbolic_shape("a")
    spec = ShapeDtypeStruct((a, 2), F32)
    lines = _module_lines(export.export(jit(_sin_twice_plus))(spec, spec))
    start = next(i for i, line in enumerate(lines) if "func.func public @main" in line)
    end = next(i for i, line in enumerate(lines) if "func.func private" in line)
    # main: constants first, every dimension size read before the checks, the checks'
    # ops located by their names
    assert lines[start:end] == _TEXTS["poly_main"]
    named = [line for line in lines if re.match(r'#loc\d* = loc\("[a-z_]+"\)$', line)]
    assert named == _TEXTS["poly_named_locations"]
    # the wrapped function: a constant size in a shape is a 1-D constant
    body = [re.sub(r" loc\(.*\)$", "", line) for line in lines[end:] if not line.startswith("#loc")]
    assert body == _TEXTS["poly_wrapped"]


def test_static_module_text_is_jax_s():
    spec = ShapeDtypeStruct((3,), F32)
    lines = _module_lines(export.export(jit(_sin_twice_plus))(spec, spec))
    # no _wrapped_jax_export_main; the arguments located at their names
    text = [re.sub(r" loc\(#.*\)$", "", line) for line in lines if not line.startswith("#loc")]
    assert text == _TEXTS["static_module"]
