"""The JVP rule of a primitive bilinear in its two operands (``dot_general``,
``conv_general_dilated``, ...): d(lhs . rhs) = dlhs . rhs + lhs . drhs."""

from __future__ import annotations

from lamina.interpreters import ad
from lamina.lax.base.operands import aval_of

__all__: list[str] = []


def bilinear_jvp(primitive):
    """The JVP rule of ``primitive``, bilinear in its two operands (zero terms skipped)."""

    def jvp(primals, tangents, **params):
        (lhs, rhs), (t_lhs, t_rhs) = primals, tangents
        ans = primitive.bind(lhs, rhs, **params)
        out = ad.Zero(ad.tangent_aval(aval_of(ans)))
        if not ad.is_zero(t_lhs):
            out = ad.add_tangents(out, primitive.bind(t_lhs, rhs, **params))
        if not ad.is_zero(t_rhs):
            out = ad.add_tangents(out, primitive.bind(lhs, t_rhs, **params))
        return ans, out

    return jvp
