"""``platform_dependent``: one function per platform, chosen when the program is lowered.

``platform_index_p`` (no operands, param ``platforms``: a tuple holding, per branch, the
platforms it serves, None for the default) is the number of the branch of the platform
being lowered for: a constant in a module for one platform, a ``stablehlo.case`` on the
platform index in a module for several. ``platform_dependent`` stages a ``cond`` on it
whose ``branches_platforms`` let the lowering keep only the branches it needs. Called
outside ``jit``, it runs the branch of the default device's platform at once.
"""

from __future__ import annotations

import functools

import numpy as np

from lamina.interpreters import Tracer, def_standard_impl
from lamina.interpreters.mlir import lower_per_platform
from lamina.ir import Primitive, ShapedArray
from lamina.lax.control_flow.cond import cond_of_platforms

__all__ = ["platform_dependent", "platform_index_p"]

platform_index_p = Primitive("platform_index")
_I32 = ShapedArray((), np.dtype(np.int32))


def _platform_index_lowering(ctx, *, platforms):
    def number(ctx, i):
        return [ctx.constant(np.int32(i), _I32)]

    rules, default = {}, None
    for i, ps in enumerate(platforms):
        rule = functools.partial(number, i=i)
        if ps is None:
            default = rule
        else:
            rules.update((p, rule) for p in ps)
    return lower_per_platform(ctx, f"platform_index(platforms={platforms})", rules, default, ())


platform_index_p.def_abstract_eval(lambda *, platforms: _I32)
platform_index_p.def_lowering(_platform_index_lowering)
def_standard_impl(platform_index_p)


def platform_dependent(*args, default=None, **per_platform):
    """``per_platform[p](*args)`` for the platform ``p`` the program is lowered for
    (``cpu=``, ``cuda=``, ``rocm=``, ``tpu=``), else ``default(*args)``. Every branch is
    traced; a module lowered for several platforms carries each one's branch."""
    branches, platforms = [], []
    for name, fun in per_platform.items():
        if not callable(fun):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for i, known in enumerate(branches):
            if known == fun:  # one branch for the platforms sharing a function
                platforms[i].append(name)
                break
        else:
            branches.append(fun)
            platforms.append([name])
    branches_platforms = tuple(tuple(ps) for ps in platforms)
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        branches.append(default)
        branches_platforms = (*branches_platforms, None)
    index = platform_index_p.bind(platforms=branches_platforms)
    if not isinstance(index, Tracer):
        return branches[int(index)](*args)
    return cond_of_platforms(index, branches, args, branches_platforms)
