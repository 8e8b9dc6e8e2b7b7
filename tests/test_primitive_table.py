"""lamina-ir's table of JAX 0.10.2's primitives against the primitives the layers define:
one registry, the same objects whether a Jaxpr is read before or after the layers load."""

import subprocess
import sys

import lamina
import lamina.experimental.checkify
import lamina.interpreters
import lamina.lax
import lamina.nn
import lamina.numpy
import lamina.random
from lamina.ir import default_registry

PROBE = """
from lamina.ir import parse_jaxpr
text = '''{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = add a b
    d:f32[3] = cumsum[axis=0 reverse=False] c
  in (d,) }'''
before = parse_jaxpr(text)
import lamina.lax
import lamina.numpy
after = parse_jaxpr(text)
prims = [e.primitive for e in before.eqns]
assert prims == [e.primitive for e in after.eqns] and prims[0] is after.eqns[0].primitive
assert prims[0] is lamina.lax.add_p and prims[1] is lamina.lax.cumsum_p
print(str(after) == text)
"""


def test_a_jaxpr_read_before_the_layers_load_holds_their_primitives():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "True\n"


def test_the_layers_primitives_are_jax_primitives():
    # lamina's checkpoint primitive is JAX's 'remat2', and psum/pmax/pmin bind one
    # operand with one result (recorded from JAX 0.10.2: psum_p.multiple_results is
    # False and psum of a pair binds psum twice).
    names = default_registry.names()
    known = {n: default_registry.known(n) for n in names}
    assert {n for n in names if known[n] is None} == set()
    differ = {n for n in names if bool(default_registry.lookup(n).multiple_results) != known[n][0]}
    assert differ == set()
    assert not any(default_registry.is_placeholder(default_registry.lookup(n)) for n in names)
    assert lamina.interpreters.checkpoint_p is default_registry.lookup("remat2")
    for name in ("psum", "pmax", "pmin"):
        assert getattr(lamina.lax, f"{name}_p").multiple_results is False
