"""lamina.extend.mlir, .lowering, .xla, .sharding, .pallas, .ifrt_programs."""

import numpy as np
import pytest

import lamina as jax
import lamina.interpreters
import lamina.numpy as jnp
import lamina.pallas
from lamina.extend import core, ifrt_programs, lowering, mlir, pallas, sharding, xla
from lamina.extend.mlir.dialects import stablehlo


def test_portable_artifact_round_trip():
    text = jax.jit(lambda x: x + 1).lower(jnp.ones(2)).as_text()
    artifact = mlir.serialize_portable_artifact(text, "1.0.0")
    assert isinstance(artifact, bytes)
    with lowering.JaxIrContext() as context:
        stablehlo.register_dialect(context)
        module = mlir.deserialize_portable_artifact(artifact)
        assert "stablehlo.add" in str(module)


def test_lowering_rule_sees_the_context_class():
    seen = []
    p = core.Primitive("my_neg", registry=None)
    p.def_abstract_eval(lambda x: x)

    def rule(ctx, x):
        seen.append(isinstance(ctx, lowering.LoweringRuleContext))
        return [stablehlo.negate(x)]

    p.def_lowering(rule)
    np.testing.assert_array_equal(jax.jit(p.bind)(jnp.arange(3.0)), [0.0, -1.0, -2.0])
    assert seen == [True]
    assert isinstance(lowering.upstream_dialects, type(lowering.upstream_dialects))
    assert mlir.lower_with_sharding_in_types(None, "op", None) == "op"


def test_hlo_module_transformation_runs_on_compile():
    modules = []

    def spy(module: bytes):
        modules.append(len(module))
        return None  # unchanged

    xla.register_hlo_module_transformation(spy, name="lamina_test_spy", platforms="cpu")
    try:
        assert float(jax.jit(lambda x: x * 5 + 2)(1.0)) == 7.0
    finally:
        assert xla.clear_hlo_module_transformation("lamina_test_spy", platforms="cpu")
    assert modules and all(n > 0 for n in modules)
    assert not xla.clear_hlo_module_transformation("lamina_test_spy", platforms="cpu")
    with pytest.raises(TypeError):
        xla.register_hlo_module_transformation(spy, name="x", stage=0)


def test_sharding_protos_round_trip():
    replicated = sharding.xla_client.HloSharding.replicate()
    data = sharding.get_serialized_proto_from_hlo_sharding(replicated)
    assert sharding.get_hlo_sharding_from_serialized_proto(data) == replicated
    assert sharding.get_op_sharding_from_serialized_proto(data).SerializeToString() == data


def test_gspmd_sharding_is_the_engines():
    assert sharding.GSPMDSharding is lamina.interpreters.GSPMDSharding


def test_pallas_hooks_and_ifrt_programs():
    assert pallas.GridMapping is lamina.pallas.GridMapping
    assert callable(pallas.register_lowering_rule)
    assert hasattr(ifrt_programs.ifrt_programs, "make_hlo_program")
