"""Cases for test_jvp_jaxprs.py: every differentiable lax primitive, traced as
``make_jaxpr(jvp(f))`` and ``make_jaxpr(grad(sum of f))``, written against a ``jax``-like
module pair so the same cases run under lamina and under JAX.

JAX's texts in data/jvp_jaxprs.json were recorded with JAX 0.10.2 by calling
``record(jax, jax.lax)`` from a separate Python that has JAX (lamina never imports it)."""

from __future__ import annotations

import json
import pathlib

import ml_dtypes
import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "jvp_jaxprs.json"


def build_cases(jax, lax):
    """``{name: (f, args)}`` with float32 (or complex64) arguments."""
    f32, c64 = np.float32, np.complex64

    def V(*shape):
        return np.arange(1, int(np.prod(shape)) + 1, dtype=f32).reshape(shape) / 7 + 0.25

    S = f32
    cases = {}

    def case(name, f, *args):
        cases[name] = (f, args)

    un = [
        "abs",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atanh",
        "cbrt",
        "ceil",
        "cos",
        "cosh",
        "digamma",
        "erf",
        "erf_inv",
        "erfc",
        "exp",
        "exp2",
        "expm1",
        "floor",
        "is_finite",
        "lgamma",
        "log",
        "log1p",
        "logistic",
        "neg",
        "round",
        "rsqrt",
        "sign",
        "sin",
        "sinh",
        "sqrt",
        "square",
        "tan",
        "tanh",
        "bessel_i0e",
        "bessel_i1e",
        "real",
        "imag",
        "conj",
    ]
    for n in un:
        case(n, getattr(lax, n), S(0.5))
    for n in [
        "abs",
        "exp",
        "log",
        "sqrt",
        "sin",
        "tanh",
        "sign",
        "real",
        "imag",
        "conj",
        "expm1",
        "log1p",
        "rsqrt",
        "cos",
        "square",
    ]:
        case(n + "_c64", getattr(lax, n), c64(0.5 + 0.25j))
    bn = [
        "add",
        "sub",
        "mul",
        "div",
        "pow",
        "atan2",
        "max",
        "min",
        "rem",
        "nextafter",
        "igamma",
        "igammac",
        "igamma_grad_a",
        "polygamma",
        "zeta",
        "random_gamma_grad",
        "complex",
    ]
    for n in bn:
        case(n, getattr(lax, n), S(0.5), S(1.5))
    for n in ["add", "sub", "mul", "div", "pow"]:
        case(n + "_c64", getattr(lax, n), c64(0.5 + 0.25j), c64(1.5 - 0.5j))
    for n in ["add", "sub", "mul", "div", "pow", "atan2", "max", "min", "rem"]:
        case(n + "_arr", getattr(lax, n), V(3), V(3) + 1)
    case("pow_int", lambda x: lax.pow(x, np.int32(3)), V(3))
    case("integer_pow_arr", lambda x: lax.integer_pow(x, 0), V(3))
    case("betainc", lax.betainc, S(0.5), S(1.5), S(0.25))
    for y in [0, 1, 2, 3, -1, -2]:
        case(f"integer_pow_{y}", lambda x, y=y: lax.integer_pow(x, y), S(0.5))
    case("clamp", lax.clamp, S(0.1), S(0.5), S(0.9))
    case("select_n", lambda a, b: lax.select_n(np.array([True, False, True]), a, b), V(3), V(3))
    case("convert_bf16", lambda x: lax.convert_element_type(x, ml_dtypes.bfloat16), V(3))
    case("convert_c64", lambda x: lax.convert_element_type(x, np.complex64), V(3))
    case(
        "reduce_precision",
        lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
        V(3),
    )
    for n in ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]:
        case(n, lambda x, n=n: getattr(lax, n)(x, (1,)), V(2, 3))
    for n in ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]:
        case(n, lambda x, n=n: getattr(lax, n)(x, axis=1), V(2, 3))
        case(n + "_rev", lambda x, n=n: getattr(lax, n)(x, axis=0, reverse=True), V(2, 3))
    case("sort", lambda x: lax.sort(x, dimension=0), V(4))
    case("sort2", lambda x, y: lax.sort((x, y), dimension=0, num_keys=1), V(4), V(4))
    case("top_k", lambda x: lax.top_k(x, 2)[0], V(4))
    case("top_k_2d", lambda x: lax.top_k(x, 2)[0], V(3, 4))
    case(
        "dot_general",
        lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
        V(2, 3),
        V(3, 4),
    )
    case(
        "dot_general_batch",
        lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        V(2, 2, 3),
        V(2, 3, 4),
    )
    case(
        "dot_general_c64",
        lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
        V(2, 3).astype(c64),
        V(3, 4).astype(c64),
    )
    case(
        "conv",
        lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME"),
        V(1, 2, 5, 5),
        V(3, 2, 3, 3),
    )
    case(
        "conv_strided",
        lambda a, b: lax.conv_general_dilated(
            a, b, (2, 1), [(1, 0), (0, 1)], lhs_dilation=(1, 2), rhs_dilation=(2, 1)
        ),
        V(1, 2, 5, 5),
        V(3, 2, 2, 2),
    )
    case("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 0), (2, 2)), V(3, 3))
    case(
        "dynamic_update_slice",
        lambda x, u: lax.dynamic_update_slice(x, u, (1, 0)),
        V(3, 3),
        V(2, 2),
    )
    case("slice", lambda x: lax.slice(x, (1, 0), (3, 2), (1, 2)), V(3, 3))
    GD = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    IDX = np.array([[2], [0]], np.int32)
    case(
        "gather",
        lambda x: lax.gather(x, IDX, GD, (1, 3), mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS),
        V(3, 3),
    )
    SD = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    for n in ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max", "scatter_sub"]:
        case(
            n,
            lambda x, u, n=n: getattr(lax, n)(
                x, IDX, u, SD, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS
            ),
            V(3, 3),
            V(2, 3),
        )
    case(
        "scatter_unique",
        lambda x, u: lax.scatter(
            x,
            IDX,
            u,
            SD,
            indices_are_sorted=True,
            unique_indices=True,
            mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
        ),
        V(3, 3),
        V(2, 3),
    )
    case("pad", lambda x, p: lax.pad(x, p, ((1, 0, 1), (0, 2, 0))), V(2, 3), S(0.5))
    case("pad_neg", lambda x: lax.pad(x, 0.0, ((-1, 1, 0), (0, 0, 1))), V(3, 3))
    case("concatenate", lambda a, b: lax.concatenate([a, b], 0), V(2, 3), V(1, 3))
    case("reshape", lambda x: lax.reshape(x, (3, 2)), V(2, 3))
    case("reshape_dims", lambda x: lax.reshape(x, (3, 2), dimensions=(1, 0)), V(2, 3))
    case("transpose", lambda x: lax.transpose(x, (1, 0)), V(2, 3))
    case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), V(3))
    case("broadcast", lambda x: lax.broadcast(x, (2,)), V(3))
    case("rev", lambda x: lax.rev(x, (0,)), V(2, 3))
    case("squeeze", lambda x: lax.squeeze(x, (0,)), V(1, 3))
    case("expand_dims", lambda x: lax.expand_dims(x, (0,)), V(3))
    case(
        "reduce_window_sum",
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID"),
        V(3, 4),
    )
    case(
        "reduce_window_max",
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 2), "SAME"),
        V(3, 4),
    )
    case(
        "reduce_window_min",
        lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1), "VALID"),
        V(3, 4),
    )
    case(
        "reduce_window_generic",
        lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,), (1,), "VALID"),
        V(4),
    )
    case("reduce_generic", lambda x: lax.reduce(x, 1.0, lax.mul, (0,)), V(3))
    case("reduce_and_select", lambda x: lax.select_n(lax.gt(x, f32(1)), x, lax.neg(x)), V(3))
    case("stop_gradient", lambda x: lax.mul(lax.stop_gradient(x), x), V(3))
    case("split", lambda x: lax.split(x, (1, 2), axis=0)[1], V(3))
    case("sort_key_val", lambda x, y: lax.sort_key_val(x, y)[1], V(4), V(4))
    case(
        "argmax_take",
        lambda x: lax.mul(x, lax.convert_element_type(lax.argmax(x, 0, np.int32), f32)),
        V(3),
    )
    case("optimization_barrier", lambda x: lax.optimization_barrier(x), V(3))
    case(
        "cholesky",
        lambda a: lax.linalg.cholesky(
            lax.add(lax.dot(a, lax.transpose(a, (1, 0))), 3 * np.eye(3, dtype=f32))
        ),
        V(3, 3),
    )
    case(
        "triangular_solve",
        lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
        V(3, 3),
        V(3, 2),
    )
    case(
        "triangular_solve_right_t",
        lambda a, b: lax.linalg.triangular_solve(
            a, b, left_side=False, lower=False, transpose_a=True
        ),
        V(3, 3),
        V(2, 3),
    )
    case("eigh", lambda a: lax.linalg.eigh(lax.add(a, lax.transpose(a, (1, 0))))[1], V(3, 3))
    case("eigh_w", lambda a: lax.linalg.eigh(lax.add(a, lax.transpose(a, (1, 0))))[0], V(3, 3))
    case("qr", lambda a: lax.linalg.qr(a)[1], V(3, 3))
    case("qr_q", lambda a: lax.linalg.qr(a, full_matrices=False)[0], V(4, 3))
    case("svd", lambda a: lax.linalg.svd(a, compute_uv=False), V(3, 3))
    case("svd_uv", lambda a: lax.linalg.svd(a, full_matrices=False)[0], V(3, 3))
    case("lu", lambda a: lax.linalg.lu(a)[0], V(3, 3))
    case(
        "cholesky_c64",
        lambda a: lax.linalg.cholesky(
            lax.add(lax.dot(a, lax.transpose(lax.conj(a), (1, 0))), 3 * np.eye(3, dtype=c64))
        ),
        V(3, 3).astype(c64),
    )

    def _cls(a, b):
        def matvec(x):
            return lax.dot(a, x)

        def solve(m, x):
            return lax.div(x, lax.reduce_sum(a, (1,)))

        return lax.custom_linear_solve(matvec, b, solve, symmetric=False)

    case("custom_linear_solve", _cls, V(3, 3), V(3))
    case("fft", lambda x: lax.fft(x, "FFT", (4,)), V(4).astype(c64))
    case("ifft", lambda x: lax.fft(x, "IFFT", (4,)), V(4).astype(c64))
    case("rfft", lambda x: lax.fft(x, "RFFT", (4,)), V(4))
    case("irfft", lambda x: lax.fft(x, "IRFFT", (4,)), V(3).astype(c64))

    return cases


def loss(jax, lax, f):
    def g(*a):
        out = f(*a)
        leaves = jax.tree_util.tree_leaves(out)
        tot = None
        for l in leaves:
            if np.issubdtype(l.dtype, np.complexfloating):
                l = lax.real(l)
            if not np.issubdtype(l.dtype, np.floating):
                continue
            s = lax.reduce_sum(l, tuple(range(l.ndim))) if l.ndim else l
            s = lax.convert_element_type(s, np.float32)
            tot = s if tot is None else lax.add(tot, s)
        return tot

    return g


def trace_all(jax, lax):
    """``{"jvp NAME" / "grad NAME": printed Jaxpr or "ERR ExceptionType"}``."""
    out = {}
    for name, (f, args) in build_cases(jax, lax).items():
        n = len(args)
        tans = tuple(np.full(np.shape(a), 1.0 + i, np.asarray(a).dtype) for i, a in enumerate(args))

        def pushed(*at, f=f, n=n):
            return jax.jvp(f, at[:n], at[n:])

        out["jvp " + name] = _trace(pushed, jax, *args, *tans)
        out["grad " + name] = _trace(
            jax.grad(loss(jax, lax, f), argnums=tuple(range(n))), jax, *args
        )
    return out


def _trace(f, jax, *args):
    try:
        return str(jax.make_jaxpr(f)(*args))
    except Exception as e:  # the error type is what is recorded
        return f"ERR {type(e).__name__}"


def record(jax, lax):
    """Writes data/jvp_jaxprs.json from ``jax`` and its ``lax``."""
    DATA.write_text(json.dumps(trace_all(jax, lax), indent=1, sort_keys=True) + "\n")
