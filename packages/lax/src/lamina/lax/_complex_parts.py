"""The complex parts: ``real``, ``imag`` and ``conj`` (exported by :mod:`.unary`), each
with its rules; all three are linear, so they have transposes."""

from __future__ import annotations

import numpy as np

from lamina.interpreters import ad, batching
from lamina.interpreters.mlir import hlo
from lamina.ir import ShapedArray, dtypes
from lamina.lax._common import COMPLEX, aval_of, check_dtype, standard_primitive
from lamina.lax.elementwise import neg

__all__ = ["conj", "conj_p", "imag", "imag_p", "real", "real_p"]

F32 = ("float32", np.float32)
F64 = ("float64", np.float64)


def _part(name, op):
    """``real`` or ``imag``: a complex operand to its real dtype."""

    def abstract_eval(x):
        check_dtype(name, x.dtype, (COMPLEX,))
        return ShapedArray(x.shape, _real_part(x.dtype), weak_type=x.weak_type)

    def lowering(ctx, x):
        return [getattr(hlo, op)(x, results=[ctx.ir_type(ctx.avals_out[0])])]

    prim = standard_primitive(name, abstract_eval, lowering)
    batching.defvectorized(prim)
    return prim


def _real_part(dtype):
    return np.finfo(dtype).dtype


def _complex_of(dtype):
    return np.dtype(np.complex64 if dtype == np.float32 else np.complex128)


real_p = _part("real", "real")
imag_p = _part("imag", "imag")


def _conj_abstract_eval(x, *, input_dtype):
    check_dtype("conj", x.dtype, (F32, COMPLEX, F64))
    dtype = x.dtype if dtypes.issubdtype(x.dtype, np.complexfloating) else _complex_of(x.dtype)
    return ShapedArray(x.shape, dtype, weak_type=x.weak_type)


def _conj_lowering(ctx, x, *, input_dtype):
    aval_in = ctx.avals_in[0]
    if not dtypes.issubdtype(aval_in.dtype, np.complexfloating):
        zero = ctx.broadcast_in_dim(ctx.constant(0, aval_in.update(shape=())), aval_in, ())
        return [hlo.complex(x, zero)]
    part = ctx.ir_type(aval_in.update(dtype=_real_part(aval_in.dtype)))
    return [hlo.complex(hlo.real(x, results=[part]), hlo.negate(hlo.imag(x, results=[part])))]


conj_p = standard_primitive("conj", _conj_abstract_eval, _conj_lowering)
batching.defvectorized(conj_p)


def real(x):
    """Elementwise real part of a complex array."""
    return real_p.bind(x)


def imag(x):
    """Elementwise imaginary part of a complex array."""
    return imag_p.bind(x)


def conj(x):
    """Elementwise complex conjugate (a real ``x`` becomes complex)."""
    return conj_p.bind(x, input_dtype=aval_of(x).dtype)


def _zeros_like(x):
    return ad.zeros_like_aval(ad.tangent_aval(aval_of(x)))


def _real_transpose(ct, x):
    from lamina.lax.binary import complex

    return [complex(ct, _zeros_like(ct))]


def _imag_transpose(ct, x):
    from lamina.lax.binary import complex

    return [complex(_zeros_like(ct), neg(ct))]


def _conj_transpose(ct, x, *, input_dtype):
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(ct)]
    return [real(ct)]


for _p in (real_p, imag_p, conj_p):
    ad.deflinear(_p)
real_p.def_transpose(_real_transpose)
imag_p.def_transpose(_imag_transpose)
conj_p.def_transpose(_conj_transpose)
