"""Run the JAX ecosystem on lamina and on JAX 0.10.2, side by side.

    uv run python tools/ecosystem_check.py [--target /tmp/eco] [--jax-python PY]
        [--sources /tmp/ecosrc] [--no-install] [--programs-only | --tests-only]
        [--libs optax,chex,...]

1. Installs optax, chex, equinox, flax and diffrax (versions that support JAX 0.10.2)
   and the pure-Python packages they need into a throwaway folder (``--target``), with
   ``--no-deps``, so that neither JAX nor anything else is pulled in: lamina never
   depends on them.
2. Runs a README-style program of each library on lamina (``python -m lamina.run``)
   and on JAX (``--jax-python``, an interpreter with JAX 0.10.2 installed, with the same
   folder on ``PYTHONPATH``), and compares the numbers each prints.
3. Runs a part of each library's own test suite on both and prints the pass counts side
   by side, with the tests that pass on JAX and not on lamina. optax's and chex's tests
   ship inside their packages; those of equinox, flax and diffrax come from their
   repositories at the installed versions' tags, laid out under ``--sources`` as
   ``equinox/tests``, ``flax/tests`` and ``diffrax/test``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The libraries at versions that support JAX 0.10.2, and the pure-Python packages they
# (and pytest) need at import time.
PACKAGES = [
    "optax==0.2.8",
    "chex==0.1.92",
    "equinox==0.13.8",
    "flax==0.12.8",
    "diffrax==0.7.2",
    "jaxtyping==0.3.11",
    "wadler_lindig==0.1.8",
    "lineax==0.1.1",
    "optimistix==0.1.0",
    "treescope==0.1.10",
    "msgpack==1.2.4",
    "pyyaml==6.0.4",
    "rich==15.0.0",
    "markdown-it-py==4.3.0",
    "mdurl==0.1.2",
    "pygments==2.21.0",
    "typing_extensions==4.16.0",
    "absl-py==2.5.1",
    "toolz==1.2.0",
    "cloudpickle==3.1.3",
    "pytest==9.2.0",
    "pluggy==1.7.0",
    "iniconfig==2.3.1",
    "packaging==26.3",
]

# ------------------------------------------------------------------ README-style programs

PROGRAMS = {
    "optax": """
import jax, jax.numpy as jnp, optax
kx, kw = jax.random.split(jax.random.PRNGKey(0))
x = jax.random.normal(kx, (64, 3))
y = x @ jnp.array([1.0, -2.0, 0.5]) + 0.3
params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
def loss_fn(p):
    return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)
opt = optax.adam(0.1)
state = opt.init(params)
@jax.jit
def step(p, s):
    l, g = jax.value_and_grad(loss_fn)(p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, l
losses = []
for i in range(100):
    params, state, l = step(params, state)
    losses.append(float(l))
result = {"loss0": losses[0], "loss_last": losses[-1], "w": params["w"].tolist(),
          "b": float(params["b"])}
""",
    "chex": """
import jax, jax.numpy as jnp, chex
@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array
p = Params(w=jnp.ones((3, 2)), b=jnp.zeros(2))
chex.assert_shape(p.w, (3, 2))
chex.assert_rank([p.w, p.b], [2, 1])
chex.assert_type(p.w, float)
q = jax.tree_util.tree_map(lambda a: a * 2.0, p)
chex.assert_trees_all_close(q.w, 2 * p.w)
@jax.jit
def f(p, x):
    chex.assert_equal_shape([x, p.b])
    return jnp.sum(p.w @ x + 1.0)
caught = False
try:
    chex.assert_shape(p.b, (3,))
except AssertionError:
    caught = True
r = p.replace(b=jnp.ones(2))
result = {"f": float(f(p, jnp.arange(2.0))), "caught": caught,
          "leaves": len(jax.tree_util.tree_leaves(q)), "b": r.b.tolist()}
""",
    "equinox": """
import jax, jax.numpy as jnp, equinox as eqx, optax
mk, dk = jax.random.split(jax.random.PRNGKey(0))
model = eqx.nn.MLP(in_size=2, out_size=1, width_size=16, depth=2, key=mk)
x = jax.random.normal(dk, (32, 2))
y = jnp.sin(x[:, :1]) + x[:, 1:] ** 2
@eqx.filter_grad
def grads(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)
@eqx.filter_jit
def loss(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)
opt = optax.sgd(0.05)
state = opt.init(eqx.filter(model, eqx.is_array))
@eqx.filter_jit
def step(model, state, x, y):
    u, state = opt.update(grads(model, x, y), state)
    return eqx.apply_updates(model, u), state
l0 = float(loss(model, x, y))
for _ in range(50):
    model, state = step(model, state, x, y)
result = {"loss0": l0, "loss_last": float(loss(model, x, y)),
          "out": model(jnp.ones(2)).tolist()}
""",
    "flax.linen": """
import jax, jax.numpy as jnp, optax
import flax.linen as nn
class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(16)(x)))
model = MLP()
x = jax.random.normal(jax.random.PRNGKey(0), (32, 3))
y = jnp.sum(x, axis=1, keepdims=True)
params = model.init(jax.random.PRNGKey(1), x)
tx = optax.adam(1e-2)
state = tx.init(params)
@jax.jit
def step(params, state):
    def loss_fn(p):
        return jnp.mean((model.apply(p, x) - y) ** 2)
    l, g = jax.value_and_grad(loss_fn)(params)
    u, state = tx.update(g, state, params)
    return optax.apply_updates(params, u), state, l
losses = []
for _ in range(30):
    params, state, l = step(params, state)
    losses.append(float(l))
result = {"loss0": losses[0], "loss_last": losses[-1],
          "kernel_sum": float(jnp.sum(params["params"]["Dense_0"]["kernel"]))}
""",
    "flax.nnx": """
import jax, jax.numpy as jnp, optax
from flax import nnx
class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(3, 16, rngs=rngs)
        self.l2 = nnx.Linear(16, 1, rngs=rngs)
    def __call__(self, x):
        return self.l2(nnx.relu(self.l1(x)))
model = MLP(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
x = jax.random.normal(jax.random.PRNGKey(0), (32, 3))
y = jnp.sum(x, axis=1, keepdims=True)
@nnx.jit
def step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)
    l, g = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, g)
    return l
losses = [float(step(model, optimizer, x, y)) for _ in range(30)]
result = {"loss0": losses[0], "loss_last": losses[-1],
          "kernel_sum": float(jnp.sum(model.l1.kernel[...]))}
""",
    "diffrax": """
import jax, jax.numpy as jnp, diffrax
def vf(t, y, args):
    return -args * y + jnp.sin(t)
sol = diffrax.diffeqsolve(
    diffrax.ODETerm(vf), diffrax.Tsit5(), t0=0.0, t1=3.0, dt0=0.1,
    y0=jnp.array([1.0, 2.0]), args=0.5, saveat=diffrax.SaveAt(ts=jnp.linspace(0, 3, 4)),
    stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6))
result = {"ys": sol.ys.tolist(), "steps": int(sol.stats["num_steps"])}
""",
}
_PRINT_RESULT = "\nimport json\nprint('RESULT ' + json.dumps(result))\n"

# ------------------------------------------------------------------ test-suite subsets

# Library -> (folder under --sources or "<target>" for tests shipped in the package,
# test files). Files needing TensorFlow, scikit-learn, orbax or several devices are left
# out.
TESTS = {
    "optax": (
        "<target>/optax",
        [
            "_src/base_test.py",
            "_src/combine_test.py",
            "_src/factorized_test.py",
            "_src/linear_algebra_test.py",
            "_src/lookahead_test.py",
            "_src/numerics_test.py",
            "_src/transform_test.py",
            "_src/update_test.py",
            "_src/utils_test.py",
            "losses/_classification_test.py",
            "losses/_regression_test.py",
            "schedules/_schedule_test.py",
            "transforms/_clipping_test.py",
            "transforms/_accumulation_test.py",
        ],
    ),
    "chex": (
        "<target>/chex/_src",
        [
            "asserts_internal_test.py",
            "asserts_test.py",
            "dataclass_test.py",
            "dimensions_test.py",
            "restrict_backends_test.py",
            "variants_test.py",
            "warnings_test.py",
        ],
    ),
    "equinox": (
        "equinox/tests",
        [
            "test_abstract.py",
            "test_ad.py",
            "test_enum.py",
            "test_eval_shape.py",
            "test_filters.py",
            "test_jit.py",
            "test_module.py",
            "test_nn.py",
            "test_tree.py",
            "test_update.py",
        ],
    ),
    "flax": (
        "flax/tests",
        [
            "struct_test.py",
            "traverse_util_test.py",
            "linen/linen_linear_test.py",
            "linen/linen_activation_test.py",
            "linen/linen_module_test.py",
            "nnx/module_test.py",
            "nnx/rngs_test.py",
            "nnx/optimizer_test.py",
        ],
    ),
    "diffrax": (
        "diffrax/test",
        [
            "test_term.py",
            "test_saveat_solution.py",
            "test_interpolation.py",
            "test_misc.py",
            "test_vmap.py",
        ],
    ),
}

_ALIAS_PYTEST = (
    "import sys, lamina.compat; lamina.compat.install(); import pytest; "
    "sys.exit(pytest.main(sys.argv[1:]))"
)


def _env(target: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("XLA_FLAGS", "")
    return env


def install(target: Path) -> None:
    print(f"installing {len(PACKAGES)} packages into {target} (--no-deps)", flush=True)
    target.mkdir(parents=True, exist_ok=True)
    uv = shutil.which("uv")
    if uv:
        command = [uv, "pip", "install", "--no-deps", "--target", str(target), *PACKAGES]
    else:
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target)]
        command += PACKAGES
    subprocess.run(command, check=True)


def _lamina_python() -> list[str]:
    return [sys.executable]


def run_program(python: list[str], source: str, target: Path, alias: bool) -> dict | str:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source + _PRINT_RESULT)
    command = [*python, "-m", "lamina.run", f.name] if alias else [*python, f.name]
    try:
        out = subprocess.run(command, env=_env(target), capture_output=True, text=True, timeout=900)
    finally:
        os.unlink(f.name)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]


def _close(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    return a == b


def check_programs(libs, target: Path, jax_python: str) -> bool:
    ok = True
    for lib in libs:
        for name, source in PROGRAMS.items():
            if name.split(".")[0] != lib:
                continue
            ours = run_program(_lamina_python(), source, target, alias=True)
            theirs = run_program([jax_python], source, target, alias=False)
            if isinstance(ours, dict) and isinstance(theirs, dict):
                same = all(_close(ours.get(k), v) for k, v in theirs.items())
                exact = ours == theirs
                verdict = "identical" if exact else ("close" if same else "DIFFERENT")
            else:
                same, verdict = False, "FAILED"
            ok &= same
            print(f"program {name:11s} {verdict}")
            if not same:
                print(f"    lamina: {ours}\n    JAX:    {theirs}")
    return ok


def _outcomes(xml_path: Path) -> dict[str, str]:
    if not xml_path.exists():
        return {}
    outcomes = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "skipped" in kinds:
            outcomes[name] = "skipped"
        elif kinds & {"failure", "error"}:
            outcomes[name] = "failed"
        else:
            outcomes[name] = "passed"
    return outcomes


def run_tests(lib: str, target: Path, sources: Path, jax_python: str, timeout: int):
    folder, files = TESTS[lib]
    base = (
        target / folder[len("<target>/") :] if folder.startswith("<target>") else sources / folder
    )
    paths = [str(base / f) for f in files if (base / f).exists()]
    if not paths:
        print(f"tests {lib}: no test files under {base}")
        return None
    results = {}
    for side, python in (
        ("lamina", [*_lamina_python(), "-c", _ALIAS_PYTEST]),
        ("jax", [jax_python, "-m", "pytest"]),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            xml_path = Path(tmp) / "junit.xml"
            options = ["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
            command = [*python, *options, f"--junitxml={xml_path}", *paths]
            try:
                out = subprocess.run(
                    command,
                    env=_env(target),
                    cwd=tmp,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                summary = (out.stdout.strip().splitlines() or ["no output"])[-1]
                print(f"tests {lib} on {side}: {summary}", flush=True)
            except subprocess.TimeoutExpired:
                print(f"tests {lib} on {side}: timed out after {timeout} s", flush=True)
            results[side] = _outcomes(xml_path)
    return results


def report_tests(lib: str, results) -> bool:
    ours, theirs = results["lamina"], results["jax"]
    passed_jax = {n for n, o in theirs.items() if o == "passed"}
    passed_ours = {n for n, o in ours.items() if o == "passed"}
    kept = len(passed_jax & passed_ours)
    share = kept / len(passed_jax) if passed_jax else 1.0
    print(
        f"tests {lib:8s} lamina {len(passed_ours):5d} passed   JAX {len(passed_jax):5d} passed"
        f"   of JAX's passes {kept}/{len(passed_jax)} = {share:.1%} on lamina"
    )
    for name in sorted(passed_jax - passed_ours):
        print(f"    not on lamina: {name} ({ours.get(name, 'not run')})")
    return share >= 0.9


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="/tmp/eco", type=Path)
    parser.add_argument("--jax-python", default="/tmp/jaxenv/bin/python")
    parser.add_argument("--sources", default="/tmp/ecosrc", type=Path)
    parser.add_argument("--no-install", action="store_true")
    parser.add_argument("--programs-only", action="store_true")
    parser.add_argument("--tests-only", action="store_true")
    parser.add_argument("--libs", default="optax,chex,equinox,flax,diffrax")
    parser.add_argument("--timeout", default=1800, type=int, help="per library and side")
    args = parser.parse_args(argv)
    libs = args.libs.split(",")
    if ROOT.resolve() in args.target.resolve().parents or args.target.resolve() == ROOT:
        parser.error("--target must lie outside the repository")
    if not args.no_install:
        install(args.target)
    ok = True
    if not args.tests_only:
        ok &= check_programs(libs, args.target, args.jax_python)
    if not args.programs_only:
        for lib in libs:
            results = run_tests(lib, args.target, args.sources, args.jax_python, args.timeout)
            if results is not None:
                ok &= report_tests(lib, results)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
