"""Elementwise functions of lamina.numpy (``jnp.sin``, ``jnp.floor_divide``,
``jnp.power``, ``jnp.gcd``, ...), with JAX's type promotion, broadcasting, special
values and derivatives. They are written in the private ``_ufuncs_*`` modules:
unary math (``_ufuncs_unary``), binary arithmetic (``_ufuncs_binary``), bitwise and
logical functions (``_ufuncs_bits``) and floating-point functions (``_ufuncs_float``).
The ufunc objects (``jnp.add``, ``jnp.logaddexp``, ...) live in :mod:`.ufunc_objects`
(their bodies in ``_ufuncs_binary``, ``_ufuncs_bits`` and ``_ufuncs_logaddexp``),
comparisons in :mod:`.comparisons`."""

from lamina.numpy import _ufuncs_binary, _ufuncs_bits, _ufuncs_float, _ufuncs_unary

__all__: list[str] = sorted(
    {
        *_ufuncs_unary.__all__,
        *_ufuncs_binary.__all__,
        *_ufuncs_bits.__all__,
        *_ufuncs_float.__all__,
    }
)

globals().update(
    {
        name: getattr(module, name)
        for module in (_ufuncs_unary, _ufuncs_binary, _ufuncs_bits, _ufuncs_float)
        for name in module.__all__
    }
)
