"""export(jit(f)) in lamina: the Exported's fields, its module, calls (eager, in jit,
under grad through the exported VJP), serialization round trips, and the errors of
JAX 0.10.2 (messages recorded from it)."""

import collections
import json
import re
from pathlib import Path

import numpy as np
import pytest

from lamina import export
from lamina.interpreters import (
    ShapeDtypeStruct,
    config,
    grad,
    jit,
    jvp,
    make_jaxpr,
    vjp,
    vmap,
)
from lamina.ir import Effect, Primitive, dtypes, ordered_effects
from lamina.lax import (
    add,
    convert_element_type,
    cos,
    linalg,
    mul,
    platform_dependent,
    reduce_sum,
    sin,
)

DATA = Path(__file__).parent / "data"
F32 = np.float32


def _sin(x):
    return sin(x)


def _sin_mul(x, y):
    return mul(sin(x), y), add(x, F32(1))


def test_public_names_are_jax_s():
    # jax.export's 13 names in JAX 0.10.2.
    assert sorted(export.__all__) == [
        "DisabledSafetyCheck", "Exported", "SymbolicScope", "default_export_platform",
        "deserialize", "export", "is_symbolic_dim",
        "maximum_supported_calling_convention_version",
        "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
        "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape",
    ]  # fmt: skip
    assert (
        export.minimum_supported_calling_convention_version,
        export.maximum_supported_calling_convention_version,
    ) == (9, 10)
    assert export.default_export_platform() == "cpu"


def test_fields():
    exp = export.export(jit(_sin_mul))(np.ones(3, F32), 2.0)
    # Recorded from JAX 0.10.2 for the same function.
    assert exp.fun_name == "_sin_mul"
    assert str(exp.in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(exp.out_tree) == "PyTreeDef((*, *))"
    assert [repr(a) for a in exp.in_avals] == [
        "ShapedArray(float32[3])",
        "ShapedArray(float32[], weak_type=True)",
    ]
    assert [repr(a) for a in exp.out_avals] == ["ShapedArray(float32[3])"] * 2
    assert exp.in_shardings_hlo == (None, None) == exp.out_shardings_hlo
    assert (exp.nr_devices, exp.platforms, exp.calling_convention_version) == (1, ("cpu",), 10)
    assert exp.ordered_effects == () == exp.unordered_effects
    assert tuple(exp.disabled_safety_checks) == ()
    assert exp.uses_global_constants is False and exp.module_kept_var_idx == (0, 1)
    assert str(exp) == "Exported(fun_name=_sin_mul, ...)"


def test_unused_arguments_are_not_kept():
    exp = export.export(jit(lambda x, unused, y: add(x, y)))(1.0, 2.0, 3.0)
    assert exp.module_kept_var_idx == (0, 2)
    assert float(exp.call(1.0, 5.0, 3.0)) == 4.0
    assert float(export.deserialize(exp.serialize()).call(1.0, 5.0, 3.0)) == 4.0


def test_module_is_jax_s_for_the_same_program():
    ours = export.export(jit(_sin))(ShapeDtypeStruct((4,), F32))
    theirs = export.deserialize((DATA / "jax_sin.bin").read_bytes())
    text = [e.mlir_module(serialized=False).operation.get_asm() for e in (ours, theirs)]
    assert text[0] == text[1]
    assert "jax.uses_shape_polymorphism = false" in text[0]
    for field in ("fun_name", "in_tree", "out_tree", "platforms", "module_kept_var_idx"):
        assert getattr(ours, field) == getattr(theirs, field)
    assert ours.in_avals == theirs.in_avals and ours.out_avals == theirs.out_avals


def test_serialize_round_trip_is_stable():
    exp = export.export(jit(_sin_mul))(np.ones(3, F32), F32(2))
    blob = exp.serialize(vjp_order=1)
    assert isinstance(blob, bytearray)
    assert export.deserialize(blob).serialize(vjp_order=1) == blob
    # Weak types are not serialized (as in JAX), so an export with a weakly typed
    # argument is stable from its first round trip on.
    weak = export.export(jit(_sin_mul))(np.ones(3, F32), 2.0)
    again = export.deserialize(weak.serialize(vjp_order=1))
    assert again.in_avals[1].weak_type is False
    blob = again.serialize(vjp_order=1)
    assert export.deserialize(blob).serialize(vjp_order=1) == blob


@pytest.mark.parametrize("roundtrip", [False, True])
def test_call_eager_and_in_jit(roundtrip):
    exp = export.export(jit(_sin_mul))(np.ones(3, F32), 2.0)
    if roundtrip:
        exp = export.deserialize(exp.serialize())
    x = np.arange(3, dtype=F32)
    for fn in (exp.call, jit(exp.call)):
        a, b = fn(x, 2.0)
        np.testing.assert_allclose(a, np.sin(x) * 2, rtol=1e-6)
        np.testing.assert_allclose(b, x + 1)
    jaxpr = str(make_jaxpr(exp.call)(x, 2.0))
    assert "custom_vjp_call" in jaxpr and "exported=Exported(fun_name=_sin_mul, ...)" in jaxpr


def test_call_in_jit_inlines_the_module():
    exp = export.export(jit(_sin))(np.ones(4, F32))
    text = jit(exp.call).lower(np.ones(4, F32)).as_text()
    assert "call @call_exported__sin" in text and "func.func private @call_exported__sin" in text


def test_grad_through_the_exported_vjp():
    exp = export.deserialize(export.export(jit(_sin_mul))(np.ones(3, F32), 2.0).serialize(1))
    x = np.arange(3, dtype=F32)
    g = grad(lambda x: reduce_sum(exp.call(x, F32(3))[0], (0,)))(x)
    np.testing.assert_allclose(g, 3 * np.cos(x), rtol=1e-6)


def test_second_order_and_the_end_of_the_vjps():
    f = jit(lambda x: mul(sin(x), x))
    exp = export.deserialize(export.export(f)(1.0).serialize(vjp_order=2))
    # d2/dx2 x sin x = 2 cos x - x sin x
    np.testing.assert_allclose(grad(grad(exp.call))(1.0), 2 * np.cos(1) - np.sin(1), rtol=1e-6)
    with pytest.raises(ValueError, match="No VJP is available"):
        grad(grad(grad(exp.call)))(1.0)


def test_vjp_export_is_jax_s():
    def f(x, n):
        return mul(sin(x), convert_element_type(n, F32)), add(n, 1)

    exp = export.export(jit(f))(np.ones(3, F32), 2)
    v = exp.vjp()
    # Recorded from JAX 0.10.2: the VJP takes the primal inputs and a cotangent per
    # result (float0 for the integer one) and gives a cotangent per input.
    assert v.fun_name == "fun_vjp_jax"
    assert str(v.in_tree) == "PyTreeDef(((*, *, *, *), {}))"
    assert str(v.out_tree) == "PyTreeDef((*, *))"
    assert [a.dtype for a in v.in_avals] == [F32, np.int32, F32, dtypes.float0]
    assert [a.dtype for a in v.out_avals] == [F32, dtypes.float0]
    assert v.module_kept_var_idx == (0, 1, 2)
    g = grad(lambda x: reduce_sum(exp.call(x, 3)[0], (0,)))(np.arange(3, dtype=F32))
    np.testing.assert_allclose(g, 3 * np.cos(np.arange(3)), rtol=1e-6)


def test_pytrees_of_arguments_and_results():
    def f(d, *, scale):
        return {"s": mul(d["a"], scale), "t": [cos(d["b"])]}

    args = ({"a": np.ones(2, F32), "b": np.zeros(3, F32)},)
    exp = export.export(jit(f))(*args, scale=F32(3))
    assert str(exp.in_tree) == "PyTreeDef((({'a': *, 'b': *},), {'scale': *}))"
    out = export.deserialize(exp.serialize()).call(*args, scale=F32(2))
    np.testing.assert_allclose(out["s"], [2, 2])
    np.testing.assert_allclose(out["t"][0], [1, 1, 1])


def test_wrong_arguments_raise_jax_s_errors():
    exp = export.export(jit(lambda x, y, *, z: add(mul(x, y), z)))(
        np.ones((2, 3), F32), 2.0, z=np.ones((2, 3), F32)
    )
    ok = np.ones((2, 3), F32)
    # Messages recorded from JAX 0.10.2.
    tree = (
        "The invocation args and kwargs must have the same pytree structure as when the "
        "function '<lambda>' was exported, but they have the following structural "
        "differences:\n"
    )
    cases = [
        ((np.ones(3, F32), 2.0), {"z": ok},
         "Rank mismatch for args[0]: expected (2, 3) and called with (3,)"),
        ((ok.astype(np.int32), 2.0), {"z": ok},
         "Dtype mismatch for args[0]: expected float32 and called with int32"),
        ((np.ones((2, 4), F32), 2.0), {"z": ok},
         "Shape mismatch for args[0].shape[1] (expected same constant): "
         "expected (2, 3) and called with (2, 4)"),
        ((ok, 2.0), {"z": np.ones((2, 4), F32)},
         "Shape mismatch for kwargs['z'].shape[1] (expected same constant): "
         "expected (2, 3) and called with (2, 4)"),
        ((ok, 2), {"z": ok},
         "Dtype mismatch for args[1]: expected float32 and called with int32"),
        ((ok, 2.0), {},
         tree + "   - kwargs is a <class 'dict'> with 0 child in the invocation and a "
         "<class 'dict'> with 1 child when exported, so the numbers of children do not "
         "match, with the symmetric difference of key sets: {'z'}.\n"),
        (([ok], 2.0), {"z": ok},
         tree + "   - args[0] is a <class 'list'> in the invocation and a <class 'int'> "
         "when exported, so their Python types differ.\n"),
    ]  # fmt: skip
    for args, kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            exp.call(*args, **kwargs)
        assert str(info.value) == message


def test_platforms():
    exp = export.export(jit(_sin), platforms=("cuda",))(np.ones(4, F32))
    assert exp.platforms == ("cuda",)
    with pytest.raises(ValueError) as info:
        exp.call(np.ones(4, F32))
    # Recorded from JAX 0.10.2.
    assert str(info.value) == (
        "Function '_sin' was exported for platforms '('cuda',)' but it is used on '('cpu',)'."
    )
    check = export.DisabledSafetyCheck.platform()
    exp = export.export(jit(_sin), platforms=("cuda",), disabled_checks=[check])(np.ones(4, F32))
    np.testing.assert_allclose(exp.call(np.zeros(4, F32)), np.zeros(4))
    again = export.deserialize(exp.serialize())
    assert tuple(again.disabled_safety_checks) == (check,)


def test_only_jitted_functions_are_exported():
    with pytest.raises(ValueError, match="Function to be exported must be the result of `jit`"):
        export.export(_sin)


def test_custom_calls_without_compatibility_guarantees_are_refused():
    def f(x):
        return linalg.qr(x, pivoting=True)

    with pytest.raises(ValueError, match="Cannot serialize code with custom calls whose targets"):
        export.export(jit(f))(np.ones((3, 3), F32))
    allowed = export.DisabledSafetyCheck.custom_call("lapack_sgeqp3_ffi")
    assert str(allowed) == "custom_call:lapack_sgeqp3_ffi" == repr(allowed)
    assert allowed.is_custom_call() == "lapack_sgeqp3_ffi"
    exp = export.export(jit(f), disabled_checks=[allowed])(np.ones((3, 3), F32))
    again = export.deserialize(exp.serialize())
    assert tuple(again.disabled_safety_checks) == (allowed,)


def test_namedtuple_serialization():
    Pair = collections.namedtuple("Pair", ["a", "b"])
    exp = export.export(jit(lambda x: Pair(x, mul(x, F32(2)))))(F32(1))
    with pytest.raises(ValueError) as info:
        exp.serialize()
    # Recorded from JAX 0.10.2.
    assert str(info.value) == (
        f"Cannot serialize PyTreeDef containing an unregistered type `{Pair}`. Use "
        "`export.register_pytree_node_serialization` or `export.register_namedtuple_serialization`."
    )
    assert export.register_namedtuple_serialization(Pair, serialized_name="test.Pair") is Pair
    out = export.deserialize(exp.serialize()).call(F32(3))
    assert isinstance(out, Pair) and (float(out.a), float(out.b)) == (3.0, 6.0)
    with pytest.raises(ValueError, match="Duplicate serialization registration for type"):
        export.register_namedtuple_serialization(Pair, serialized_name="other")
    with pytest.raises(ValueError, match=r"Use `jax\.export\.register_pytree_node_serialization`"):
        export.register_namedtuple_serialization(int, serialized_name="int")


def test_pytree_node_serialization_needs_a_registration():
    with pytest.raises(ValueError) as info:
        export.register_pytree_node_serialization(
            int, serialized_name="x", serialize_auxdata=bytes, deserialize_auxdata=bytes
        )
    # Recorded from JAX 0.10.2.
    assert str(info.value) == (
        "If `from_children` is not present, you must call first"
        "`jax.tree_util.register_pytree_node` for `<class 'int'>`"
    )


def test_dict_keys_must_be_strings():
    exp = export.export(jit(lambda d: d))({1: F32(2)})
    with pytest.raises(TypeError, match="Found key 1 of type <class 'int'>"):
        exp.serialize()


def test_forward_mode_fails_as_in_jax():
    exp = export.export(jit(_sin))(F32(1))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jvp(exp.call, (F32(1),), (F32(1),))


def test_vmap_runs_the_module_per_element():
    # JAX 0.10.2 has no batching rule for call_exported; lamina loops over the batch.
    exp = export.deserialize(export.export(jit(_sin_mul))(np.ones(3, F32), F32(2)).serialize(1))
    x = np.arange(12, dtype=F32).reshape(4, 3)
    y = np.arange(4, dtype=F32)
    a, b = vmap(exp.call, in_axes=(1, 0))(x.T, y)
    np.testing.assert_allclose(a, np.sin(x) * y[:, None], rtol=1e-6)
    np.testing.assert_allclose(b, x + 1)
    a, _ = jit(vmap(exp.call, in_axes=(0, None)))(x, F32(2))
    np.testing.assert_allclose(a, np.sin(x) * 2, rtol=1e-6)
    g = vmap(grad(lambda x: reduce_sum(exp.call(x, F32(2))[0], (0,))))(x)
    np.testing.assert_allclose(g, np.cos(x) * 2, rtol=1e-5)


def _sin_and_int(x):
    return reduce_sum(sin(x), (0,)), convert_element_type(x, np.int32)


def test_vmap_of_grad_with_integer_results():
    # The float0 cotangent of the integer result is never put on a device: the loop
    # runs the VJP module on the float arguments only (JAX 0.10.2 cannot vmap
    # call_exported at all; the values are NumPy's).
    exp = export.export(jit(_sin_and_int))(np.ones(3, F32))
    x = np.arange(6, dtype=F32).reshape(2, 3)
    g = vmap(grad(lambda x: exp.call(x)[0]))(x)
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-6)
    g = jit(vmap(grad(lambda x: exp.call(x)[0])))(x)
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-6)
    # The VJP itself under vmap, a batched float0 cotangent for the integer result.
    cts = (np.ones(2, F32), np.zeros((2, 3), dtypes.float0))
    (ct_x,) = vmap(lambda x, ct: vjp(exp.call, x)[1](ct))(x, cts)
    np.testing.assert_allclose(ct_x, np.cos(x), rtol=1e-6)


def test_multi_platform_export():
    def f(x):
        return platform_dependent(x, cpu=lambda x: mul(x, F32(2)), cuda=lambda x: mul(x, F32(3)))

    exp = export.export(jit(f), platforms=("cpu", "cuda"))(np.ones(4, F32))
    # As JAX 0.10.2: the platform index is main's first argument, a global constant.
    assert exp.platforms == ("cpu", "cuda") and exp.uses_global_constants is True
    text = exp.mlir_module(serialized=False).operation.get_asm()
    assert "jax.uses_shape_polymorphism = true" in text
    assert '@main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}' in text
    again = export.deserialize(exp.serialize())
    np.testing.assert_allclose(again.call(np.ones(4, F32)), 2 * np.ones(4))
    # Called from a module lowered for both platforms in the other order, the callee's
    # index is chosen by the caller's own platform index.
    lowered = jit(again.call).trace(np.ones(4, F32)).lower(lowering_platforms=("cuda", "cpu"))
    assert "call @call_exported_f(%0, %arg1)" in lowered.as_text()
    nested = export.export(jit(again.call), platforms=("cuda", "cpu"))(np.ones(4, F32))
    np.testing.assert_allclose(nested.call(np.ones(4, F32)), 2 * np.ones(4))


def test_calling_convention_version_option():
    try:
        config.update("jax_export_calling_convention_version", 9)
        assert export.export(jit(_sin))(F32(1)).calling_convention_version == 9
        config.update("jax_export_calling_convention_version", 11)
        with pytest.raises(ValueError) as info:
            export.export(jit(_sin))(F32(1))
        # Recorded from JAX 0.10.2.
        assert str(info.value) == (
            "The requested export calling convention version 11 is outside the range of "
            "supported versions [9..10]"
        )
    finally:
        config.update("jax_export_calling_convention_version", 10)


class _TestingOrderedEffect(Effect):
    pass


def _ordered_noop():
    """A primitive with an ordered effect whose lowering passes the token through."""
    effect = _TestingOrderedEffect()
    ordered_effects.add_type(_TestingOrderedEffect)
    p = Primitive("ordered_noop", registry=None)  # kept out of the rule inventory
    p.def_effectful_abstract_eval(lambda x: (x, {effect}))
    p.def_lowering(lambda ctx, x: [x])
    return p, effect


def test_ordered_effects_wrap_main_as_jax_s():
    p, effect = _ordered_noop()

    def _ordered_sin(x):
        return sin(p.bind(x))

    exp = export.export(jit(_ordered_sin))(ShapeDtypeStruct((3,), F32))
    assert exp.ordered_effects == (effect,)
    lines = exp.mlir_module().splitlines()
    text = [re.sub(r" loc\(#.*\)$", "", line) for line in lines if not line.startswith("#loc")]
    # recorded from JAX 0.10.2: main calls _wrapped_jax_export_main, tokens passed through
    want = json.loads((DATA / "jax_module_texts.json").read_text())["ordered_effects_module"]
    assert text == want
    x = np.arange(3, dtype=F32)
    np.testing.assert_allclose(exp.call(x), np.sin(x), rtol=1e-6)
