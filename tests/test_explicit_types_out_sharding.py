"""``.at[...].get/set(out_sharding=)`` and ``jnp.repeat(..., out_sharding=)`` on arrays
split over Explicit mesh axes: run with the axes made Auto and laid out as asked, as
JAX 0.10.2 does. Types, specs, the Jaxpr and the messages recorded from JAX 0.10.2;
values checked against NumPy. Runs in a fresh process with 8 CPU devices."""

import subprocess
import sys
import textwrap


def test_indexing_and_repeat_out_sharding():
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax
        import lamina.numpy as jnp
        from lamina.ir import ShardingTypeError
        from lamina.sharding import PartitionSpec as P
        jax.config.update("jax_num_cpu_devices", 8)
        mesh = jax.make_mesh((2, 4), ("x", "y"))
        xn = np.arange(32.0, dtype=np.float32).reshape(8, 4)
        perm = np.array([1, 0, 3, 2, 5, 4, 7, 6], np.int32)
        with jax.set_mesh(mesh):
            x = jax.device_put(xn, P("x", None))
            idx = jax.device_put(perm, P("x"))
            def updated(v, f):
                v = v.copy(); f(v); return v
            cases = [  # function, type, spec, NumPy value
                (lambda x: x.at[idx].get(out_sharding=P("x", None)), "float32[8@x,4]",
                 P("x", None), xn[perm]),
                (lambda x: x.at[idx].get(out_sharding=P()), "float32[8,4]", P(None, None),
                 xn[perm]),
                (lambda x: x.at[:, 1:3].get(out_sharding=P("x", None)), "float32[8@x,2]",
                 P("x", None), xn[:, 1:3]),
                (lambda x: x.at[idx].set(0.0, out_sharding=P("x", None)), "float32[8@x,4]",
                 P("x", None), np.zeros_like(xn)),
                (lambda x: x.at[np.array([1, 0, 3])].add(1.0, out_sharding=P(None, "y")),
                 "float32[8,4@y]", P(None, "y"), updated(xn, lambda v: np.add.at(v, perm[:3], 1))),
                (lambda x: jnp.repeat(x, 2, axis=0, out_sharding=P("x", None)),
                 "float32[16@x,4]", P("x", None), np.repeat(xn, 2, axis=0)),
                (lambda x: jnp.repeat(x, 2, axis=1, out_sharding=P("x", "y")),
                 "float32[8@x,8@y]", P("x", "y"), np.repeat(xn, 2, axis=1)),
                (lambda x: jnp.repeat(x, np.array([1, 2] * 4), axis=0, total_repeat_length=12,
                                      out_sharding=P(None, None)),
                 "float32[12,4]", P(None, None), np.repeat(xn, [1, 2] * 4, axis=0)),
            ]
            for f, typ, spec, want in cases:
                for g in (f, jax.jit(f)):
                    r = g(x)
                    assert str(jax.typeof(r)) == typ, (typ, jax.typeof(r))
                    assert r.sharding.spec == spec, (spec, r.sharding)
                    np.testing.assert_array_equal(np.asarray(r), want)
            lines = str(jax.make_jaxpr(cases[0][0])(x)).split("\\n")
            assert lines[:3] == [
                "{ lambda a:i32[8@x]; b:f32[8@x,4]. let",
                "    c:f32[8,4] = reshard b",
                "    d:i32[8] = reshard a",
            ], lines
            assert lines[-2:] == ["    j:f32[8@x,4] = reshard i", "  in (j,) }"], lines
            # without out_sharding JAX refuses both
            for g in (lambda x: x.at[idx].get(), jax.jit(lambda x: x.at[idx].get())):
                try:
                    g(x)
                    raise AssertionError("no error")
                except ShardingTypeError as e:
                    assert str(e).startswith("Use `.at[...].get(out_sharding=)` to provide"), e
            rep = lambda x: jnp.repeat(x, 2, axis=0)
            for g in (rep, jax.jit(rep)):
                try:
                    g(x)
                    raise AssertionError("no error")
                except ValueError as e:
                    assert str(e) == ("Please pass sharding to `jnp.repeat` via `out_sharding` "
                                      "parameter."), e
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
