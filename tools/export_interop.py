"""Serialized exports between JAX and lamina: writes the test data of
packages/export/tests/data, and checks that either library runs the other's bytes.

The programs below are written once against the ``jax`` API; run this file with JAX
0.10.2's Python to record JAX's artifacts and results, or with lamina's to write
lamina's artifacts, then ``run`` a folder of artifacts with the other library::

    /path/to/jax/python tools/export_interop.py record packages/export/tests/data
    /path/to/jax/python tools/export_interop.py record-sharded packages/export/tests/data
    uv run python tools/export_interop.py write --lamina /tmp/lamina_artifacts
    /path/to/jax/python tools/export_interop.py run /tmp/lamina_artifacts
    uv run python tools/export_interop.py run --lamina packages/export/tests/data

``record-sharded`` / ``write-sharded`` write only the programs partitioned over 8 CPU
devices (the tool always asks for 8). Each artifact ``<name>.bin`` comes with
``<name>.npz``: the arguments (``arg0``, ...) and the results the exporting library
computed (``out0``, ...).
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np

if "--lamina" in sys.argv:
    import lamina as jax
    import lamina.numpy as jnp
else:
    import jax
    import jax.numpy as jnp

export = jax.export


def _sin(x):
    return jnp.sin(x)


def _sin_mul(x, y):
    return jnp.sin(x) * y, x + 1


def _dict_matmul(d):
    return {"s": d["a"] @ d["b"], "t": [d["a"].sum()]}


def _int_where(x, m, unused):
    del unused
    return jnp.where(m, jnp.cumsum(x), -x), (x > 2).astype(jnp.float16) * 1.5


def _multi_platform(x):
    return jax.lax.platform_dependent(x, cpu=lambda x: x * 2.0, cuda=lambda x: x * 3.0)


def _ordered_dict(od):
    return od["w"] * od["v"] - 1.0


def _solve(a, b):
    return jnp.linalg.solve(a, b)


def _poly_mlp(x, w1, b1, w2):
    return jnp.tanh(x @ w1 + b1) @ w2


def _poly_reshape(x):
    return jnp.reshape(x, (x.shape[0] * 2, -1)) * x.shape[1]


def _poly_constraint(x):
    return jnp.sum(x, axis=1) * (x.shape[0] - x.shape[1])


def _sharded_mlp(x, w):
    return jnp.tanh(x @ w), x.sum(axis=1)


def _f32(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


# name -> (function, arguments, export options, VJP orders to serialize)
PROGRAMS = {
    "sin": (_sin, (_f32(4),), {}, 0),
    "sin_mul": (_sin_mul, (_f32(3), 2.0), {}, 1),
    "dict_matmul": (_dict_matmul, ({"a": _f32(2, 3), "b": _f32(3, 4, seed=1)},), {}, 2),
    "int_where": (
        _int_where,
        (np.arange(5, dtype=np.int32), np.array([1, 0, 1, 1, 0], bool), _f32(2)),
        {},
        0,
    ),
    "multi_platform": (_multi_platform, (_f32(4),), {"platforms": ("cpu", "cuda")}, 0),
    "ordered_dict": (
        _ordered_dict,
        (collections.OrderedDict(w=_f32(3), v=_f32(3, seed=2)),),
        {},
        1,
    ),
    "solve": (_solve, (_f32(3, 3) + 3 * np.eye(3, dtype=np.float32), _f32(3, seed=3)), {}, 0),
}

# Shape-polymorphic programs: name -> (function, arguments, shape specifications,
# constraints, VJP orders, arguments of other shapes to run the export on)
POLY_PROGRAMS = {
    "poly_mlp": (
        _poly_mlp,
        (_f32(3, 4), _f32(4, 8, seed=1), _f32(8, seed=2), _f32(8, 2, seed=3)),
        ("b, _", None, None, None),
        (),
        1,
        [(_f32(1, 4, seed=4),), (_f32(7, 4, seed=5),)],
    ),
    "poly_reshape": (_poly_reshape, (_f32(2, 6),), ("b, 2*n",), (), 0,
                     [(_f32(5, 4, seed=1),), (_f32(1, 2, seed=2),)]),
    "poly_constraint": (_poly_constraint, (_f32(4, 3),), ("a, b",), ("a >= b",), 0,
                        [(_f32(2, 2, seed=1),), (_f32(6, 1, seed=2),)]),
}  # fmt: skip


# Programs partitioned over a mesh of 8 devices: name -> (function, arguments, the
# partition specs of the arguments and of the results, mesh axes)
SHARDED_PROGRAMS = {
    "sharded_mlp": (
        _sharded_mlp,
        (_f32(16, 4), _f32(4, 3, seed=1)),
        (("x", None), ()),
        (("x", None), ("x",)),
        ((4, 2), ("x", "y")),
    ),
}


def _flat(tree) -> list:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def write(folder: Path, prefix: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (fun, args, options, vjp_order) in PROGRAMS.items():
        exp = export.export(jax.jit(fun), **options)(*args)
        (folder / f"{prefix}{name}.bin").write_bytes(bytes(exp.serialize(vjp_order=vjp_order)))
        outs = _flat(exp.call(*args))
        arrays = {f"arg{i}": a for i, a in enumerate(_flat(args))}
        arrays.update({f"out{i}": o for i, o in enumerate(outs)})
        np.savez(folder / f"{prefix}{name}.npz", **arrays)
        print(f"wrote {prefix}{name}")
    for name, (fun, args, specs, constraints, vjp_order, others) in POLY_PROGRAMS.items():
        symbolic = export.symbolic_args_specs(args, specs, constraints=constraints)
        exp = export.export(jax.jit(fun))(*symbolic)
        (folder / f"{prefix}{name}.bin").write_bytes(bytes(exp.serialize(vjp_order=vjp_order)))
        arrays = {}
        for k, some in enumerate([args, *others]):
            some = (*some, *args[len(some) :])  # the other shapes change leading arguments
            tag = "" if k == 0 else f"k{k}_"
            arrays.update({f"{tag}arg{i}": a for i, a in enumerate(_flat(some))})
            arrays.update({f"{tag}out{i}": o for i, o in enumerate(_flat(exp.call(*some)))})
        np.savez(folder / f"{prefix}{name}.npz", **arrays)
        print(f"wrote {prefix}{name}")


def write_sharded(folder: Path, prefix: str) -> None:
    P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
    for name, (fun, args, in_specs, out_specs, (shape, axes)) in SHARDED_PROGRAMS.items():
        mesh = jax.make_mesh(shape, axes)
        ins = tuple(NamedSharding(mesh, P(*s)) for s in in_specs)
        outs = tuple(NamedSharding(mesh, P(*s)) for s in out_specs)
        jitted = jax.jit(fun, in_shardings=ins, out_shardings=outs)
        placed = [jax.device_put(a, s) for a, s in zip(args, ins, strict=True)]
        exp = export.export(jitted)(*placed)
        (folder / f"{prefix}{name}.bin").write_bytes(bytes(exp.serialize()))
        arrays = {f"arg{i}": a for i, a in enumerate(_flat(args))}
        arrays.update({f"out{i}": o for i, o in enumerate(_flat(exp.call(*placed)))})
        np.savez(folder / f"{prefix}{name}.npz", **arrays)
        print(f"wrote {prefix}{name}")


def _placed(exp, args):
    """``args`` laid out as the export's arguments are (on a mesh of its shape)."""
    if exp.nr_devices == 1:
        return args
    named = next(s for s in exp._in_named_shardings if s is not None)
    amesh = named.mesh
    mesh = jax.make_mesh(amesh.axis_sizes, amesh.axis_names, axis_types=amesh.axis_types)
    flat, tree = jax.tree_util.tree_flatten(args)
    placed = [
        a if s is None else jax.device_put(a, s)
        for a, s in zip(flat, exp.in_shardings_jax(mesh), strict=True)
    ]
    return tree.unflatten(placed)


def run(folder: Path) -> bool:
    ok = True
    for path in sorted(folder.glob("*.bin")):
        exp = export.deserialize(bytearray(path.read_bytes()))
        saved = np.load(path.with_suffix(".npz"))
        tags = ["", *sorted({k.split("_")[0] + "_" for k in saved.files if "_" in k})]
        same = True
        for tag in tags:  # the other shapes of a polymorphic export too
            n_args = sum(k.startswith(f"{tag}arg") for k in saved.files)
            args = exp.in_tree.unflatten([saved[f"{tag}arg{i}"] for i in range(n_args)])
            args = _placed(exp, args)
            outs = _flat(exp.out_tree.unflatten(_flat(exp.call(*args[0], **args[1]))))
            want = [saved[f"{tag}out{i}"] for i in range(len(outs))]
            same &= all(
                np.allclose(o.astype(np.float64), w.astype(np.float64), rtol=1e-6, atol=1e-6)
                for o, w in zip(outs, want, strict=True)
            )
        ok &= same
        print(f"{path.name}: {'same results' if same else 'DIFFERENT results'}")
    return ok


if __name__ == "__main__":
    jax.config.update("jax_num_cpu_devices", 8)
    command, target = sys.argv[1], Path(next(a for a in sys.argv[2:] if a != "--lamina"))
    if command == "record":
        write(target, "jax_")
    elif command == "write":
        write(target, "lamina_")
    elif command == "record-sharded":
        write_sharded(target, "jax_")
    elif command == "write-sharded":
        write_sharded(target, "lamina_")
    else:
        sys.exit(0 if run(target) else 1)
