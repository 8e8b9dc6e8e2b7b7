"""`lamina.extend.core.primitives`: lamina's primitives under JAX's ``*_p`` names
(`jax.extend.core.primitives`), for code that inspects or builds Jaxprs.

Each name is the very primitive lamina's own functions bind, so
``eqn.primitive is primitives.sin_p`` holds for an equation of ``lax.sin``. The call
primitives ``call_p`` and ``closed_call_p`` are :class:`CallPrimitive` s defined here.
"""

from __future__ import annotations

import importlib

from lamina.interpreters import eval_jaxpr
from lamina.ir import ClosedJaxpr, Primitive, PrimitiveRegistry, default_registry

__all__ = ["CallPrimitive", "UserPrimitive", "call_p", "closed_call_p"]


class UserPrimitive(Primitive):
    """``jax.extend.core.Primitive``: a primitive of the user's. Unlike lamina's own, it
    stays out of the registry the Jaxpr parser reads (pass ``registry=`` to add it)."""

    def __init__(self, name: str, *, registry: PrimitiveRegistry | None = None):
        super().__init__(name, registry=registry)


# JAX 0.10.2's names (dir(jax.extend.core.primitives)).
JAX_NAMES = [
    "abs_p",
    "acos_p",
    "acosh_p",
    "add_jaxvals_p",
    "add_p",
    "after_all_p",
    "all_gather_p",
    "all_to_all_p",
    "and_p",
    "approx_top_k_p",
    "argmax_p",
    "argmin_p",
    "asin_p",
    "asinh_p",
    "atan2_p",
    "atan_p",
    "atanh_p",
    "axis_index_p",
    "bessel_i0e_p",
    "bessel_i1e_p",
    "bitcast_convert_type_p",
    "broadcast_in_dim_p",
    "call_p",
    "cbrt_p",
    "ceil_p",
    "cholesky_p",
    "clamp_p",
    "closed_call_p",
    "clz_p",
    "complex_p",
    "concatenate_p",
    "cond_p",
    "conj_p",
    "conv_general_dilated_p",
    "convert_element_type_p",
    "copy_p",
    "cos_p",
    "cosh_p",
    "create_token_p",
    "cumlogsumexp_p",
    "cummax_p",
    "cummin_p",
    "cumprod_p",
    "cumsum_p",
    "custom_jvp_call_p",
    "custom_lin_p",
    "custom_vjp_call_p",
    "device_put_p",
    "digamma_p",
    "div_p",
    "dot_general_p",
    "dynamic_slice_p",
    "dynamic_update_slice_p",
    "eig_p",
    "eigh_p",
    "empty2_p",
    "eq_p",
    "eq_to_p",
    "erf_inv_p",
    "erf_p",
    "erfc_p",
    "exp2_p",
    "exp_p",
    "expm1_p",
    "fft_p",
    "floor_p",
    "gather_p",
    "ge_p",
    "get_p",
    "gt_p",
    "hessenberg_p",
    "householder_product_p",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac_p",
    "imag_p",
    "integer_pow_p",
    "iota_p",
    "is_finite_p",
    "jit_p",
    "le_p",
    "le_to_p",
    "lgamma_p",
    "linear_solve_p",
    "log1p_p",
    "log_p",
    "logistic_p",
    "lt_p",
    "lt_to_p",
    "lu_p",
    "max_p",
    "min_p",
    "mul_p",
    "name_p",
    "ne_p",
    "neg_p",
    "nextafter_p",
    "not_p",
    "or_p",
    "pad_p",
    "pmax_p",
    "pmin_p",
    "polygamma_p",
    "population_count_p",
    "pow_p",
    "ppermute_p",
    "psum_p",
    "qr_p",
    "ragged_all_to_all_p",
    "random_bits_p",
    "random_fold_in_p",
    "random_gamma_p",
    "random_seed_p",
    "random_split_p",
    "real_p",
    "reduce_and_p",
    "reduce_max_p",
    "reduce_min_p",
    "reduce_or_p",
    "reduce_p",
    "reduce_precision_p",
    "reduce_prod_p",
    "reduce_sum_p",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum_p",
    "reduce_xor_p",
    "regularized_incomplete_beta_p",
    "rem_p",
    "remat_p",
    "reshape_p",
    "rev_p",
    "rng_bit_generator_p",
    "rng_uniform_p",
    "round_p",
    "rsqrt_p",
    "scan_p",
    "scatter_add_p",
    "scatter_max_p",
    "scatter_min_p",
    "scatter_mul_p",
    "scatter_p",
    "schur_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
    "select_and_scatter_p",
    "select_n_p",
    "sharding_constraint_p",
    "shift_left_p",
    "shift_right_arithmetic_p",
    "shift_right_logical_p",
    "sign_p",
    "sin_p",
    "sinh_p",
    "slice_p",
    "sort_p",
    "sqrt_p",
    "square_p",
    "squeeze_p",
    "stop_gradient_p",
    "sub_p",
    "svd_p",
    "swap_p",
    "tan_p",
    "tanh_p",
    "threefry2x32_p",
    "top_k_p",
    "transpose_p",
    "triangular_solve_p",
    "tridiagonal_p",
    "tridiagonal_solve_p",
    "while_p",
    "xor_p",
    "zeta_p",
]

# Where lamina keeps a primitive under another attribute name, or only in the registry
# of primitives by name: the name it is registered under.
_REGISTERED_AS = {
    "add_jaxvals_p": "add_any",
    "remat_p": "remat2",
    "custom_lin_p": "custom_lin",
    "name_p": "name",
    "threefry2x32_p": "threefry2x32",
    "random_gamma_p": "random_gamma",
    "get_p": "get",
    "swap_p": "swap",
}
# The modules whose namespaces hold primitives, imported on first use.
_MODULES = ("lamina.lax", "lamina.lax.linalg", "lamina.interpreters", "lamina.random")


class CallPrimitive(Primitive):
    """A primitive calling a function: ``bind(fun, *args, **params)`` runs ``fun`` (a
    ``linear_util.WrappedFun`` or any callable returning a sequence) on ``args`` under
    the current trace and returns its outputs as a list; ``params`` describe the call
    and do not change what it computes."""

    multiple_results = True
    call_primitive = True

    def bind(self, fun, *args, **params):
        call = getattr(fun, "call_wrapped", fun)
        return list(call(*args))


class ClosedCallPrimitive(CallPrimitive):
    """A call of a ``ClosedJaxpr`` given as the ``call_jaxpr`` param:
    ``bind(*args, call_jaxpr=closed)`` evaluates it on ``args``."""

    def bind(self, *args, call_jaxpr: ClosedJaxpr, **params):
        return list(eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args))


call_p = CallPrimitive("call", registry=None)  # not in the parser registry: no rules to list
closed_call_p = ClosedCallPrimitive("closed_call", registry=None)


def __getattr__(name: str) -> Primitive:
    if name not in JAX_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for module in map(importlib.import_module, _MODULES):
        if isinstance(getattr(module, name, None), Primitive):
            value = getattr(module, name)
            break
    else:
        value = default_registry.lookup(_REGISTERED_AS.get(name, name[:-2]))
        if value is None:
            raise AttributeError(f"lamina has no primitive {name} (JAX's {name}) yet")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *JAX_NAMES})
