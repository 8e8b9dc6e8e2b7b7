"""NamedSharding in Shardy's terms: reprs and built attributes recorded from JAX 0.10.2
(``NamedSharding._to_sdy_sharding(ndim).build({})``)."""

import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from lamina.sharding import AxisType, NamedSharding, P, make_mesh

MESH = make_mesh((4, 2), ("x", "y"))
AUTO = make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
MIXED = make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Explicit))

CASES = [
    (
        NamedSharding(MESH, P("x", None, unreduced={"y"})),
        3,
        "SdyArray([{'x'}, {}, {}])",
        '#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x"}, {}, {}], unreduced={"y"}>',
    ),
    (
        NamedSharding(AUTO, P("x", P.UNCONSTRAINED)),
        3,
        "SdyArray([{'x'}, {?}, {}])",
        '#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x"}, {?}, {}]>',
    ),
    (
        NamedSharding(MESH, P()),
        2,
        "SdyArray([{}, {}])",
        '#sdy.sharding<mesh<["x"=4, "y"=2]>, [{}, {}]>',
    ),
    (
        NamedSharding(MESH, P(("y", "x"))),
        1,
        "SdyArray([{'y', 'x'}])",
        '#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"y", "x"}]>',
    ),
    (
        NamedSharding(MESH, P(None, "y", reduced={"x"})),
        2,
        "SdyArray([{}, {'y'}])",
        '#sdy.sharding<mesh<["x"=4, "y"=2]>, [{}, {"y"}]>',
    ),
]


@pytest.fixture
def context():
    with ir.Context() as ctx:
        sdy.register_dialect(ctx)
        yield ctx


@pytest.mark.parametrize(("sharding", "ndim", "text", "attr"), CASES)
def test_sdy_sharding(context, sharding, ndim, text, attr):
    array = sharding._to_sdy_sharding(ndim)
    assert repr(array) == text
    cache = {}
    assert str(array.build(cache)) == attr
    assert cache[array] is not None and array.build(cache) is cache[array]


def test_axis_types_open_the_dimensions(context):
    array = NamedSharding(MIXED, P("x"))._to_sdy_sharding(2, modify_wrt_axis_types=True)
    assert repr(array) == "SdyArray([{'x', ?}, {?}], replicated_axes=frozenset({'y'}))"
    assert str(array.build()) == (
        '#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x", ?}, {?}], replicated={"y"}>'
    )
    auto = NamedSharding(AUTO, P("x"))._to_sdy_sharding(2, modify_wrt_axis_types=True)
    assert repr(auto) == "SdyArray([{'x', ?}, {?}])"
    assert str(array.mesh_attr()) == '#sdy.mesh<["x"=4, "y"=2]>'
