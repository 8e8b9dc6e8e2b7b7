"""The ``jit`` call primitive, staging a function as one equation, and ``eval_jaxpr``.

``jit_p`` takes JAX 0.10.2's params: ``jaxpr`` (a ``ClosedJaxpr``), ``name``,
``in_shardings``/``out_shardings`` (:data:`UNSPECIFIED` each), ``in_layouts``/
``out_layouts`` (``None`` each), ``donated_invars`` (bools), ``ctx_mesh``,
``keep_unused``, ``inline`` and ``compiler_options_kvs``. It prints as JAX prints it:
``name`` first, then the params that differ from their defaults, sorted, with the
sub-Jaxpr's inputs and outputs named like the equation's. Its impl, set by
:mod:`..runtime.executables`, compiles the Jaxpr (once per Jaxpr object) and runs it as
one executable.
"""

from __future__ import annotations

from lamina.interpreters.core.errors import user_frame
from lamina.interpreters.core.tracing import Tracer, shaped_abstractify
from lamina.interpreters.jaxprs.dce import dce_jaxpr_closed_call_rule, dce_rules
from lamina.interpreters.jaxprs.discharge import discharge_state
from lamina.interpreters.jaxprs.lowering import call_lowering
from lamina.interpreters.jaxprs.staging import describe_function, trace_to_jaxpr
from lamina.ir import AbstractRef, ClosedJaxpr, Jaxpr, Literal, Primitive

__all__ = [
    "UNSPECIFIED",
    "call_jaxpr",
    "call_staged",
    "eval_jaxpr",
    "jit_p",
    "none_for_unspecified",
    "unspecified_for_none",
]


class _Unspecified:
    """No sharding was asked for (JAX's ``UnspecifiedValue``)."""

    def __repr__(self):
        return "UnspecifiedValue"


UNSPECIFIED = _Unspecified()


def unspecified_for_none(shardings) -> tuple:
    """``jit_p``'s form of flat shardings: :data:`UNSPECIFIED` where None."""
    return tuple(UNSPECIFIED if s is None else s for s in shardings)


def none_for_unspecified(shardings):
    """Flat shardings with None where unspecified, or None when all are."""
    if all(s is UNSPECIFIED for s in shardings):
        return None
    return tuple(None if s is UNSPECIFIED else s for s in shardings)


jit_p = Primitive("jit")
jit_p.multiple_results = True


def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Runs ``jaxpr`` by binding its equations in order (so it runs under, and is
    transformed by, whatever trace is current); returns the list of outputs."""
    env = {}

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
    return [read(v) for v in jaxpr.outvars]


def _jit_impl(*args, jaxpr: ClosedJaxpr, **_):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _jit_abstract_eval(*in_avals, jaxpr: ClosedJaxpr, name="", compiler_options_kvs=(), **_):
    if compiler_options_kvs:  # XLA options belong to an executable: a staged call has none
        raise ValueError(
            "`compiler_options` can only be passed to top-level `jax.jit`. Got "
            f"compiler_options={dict(compiler_options_kvs)} specified on a nested jit "
            f"with name: {name} and source info: {user_frame()}"
        )
    return list(jaxpr.out_avals)


_DEFAULTS = {
    "keep_unused": False,
    "inline": False,
    "compiler_options_kvs": (),
    "ctx_mesh": None,
}


def _is_default(key, value) -> bool:
    if key in ("in_shardings", "out_shardings"):
        return all(s is UNSPECIFIED for s in value)
    if key in ("in_layouts", "out_layouts"):
        return all(s is None for s in value)
    if key == "donated_invars":
        return not any(value)
    if key == "ctx_mesh":
        return value is None or getattr(value, "empty", False)
    return key in _DEFAULTS and value == _DEFAULTS[key]


def _jit_pp_params(params: dict):
    shown = [
        (k, params[k]) for k in sorted(params) if k != "name" and not _is_default(k, params[k])
    ]
    return [("name", params["name"]), *shown]


jit_p.def_impl(_jit_impl)
jit_p.def_abstract_eval(_jit_abstract_eval)
jit_p.def_lowering(call_lowering)
jit_p.def_shared_names("jaxpr")
dce_rules[jit_p] = dce_jaxpr_closed_call_rule
# Printing only hides params; the parser's completion restores the defaults.
jit_p.def_pp_params(
    _jit_pp_params,
    lambda params, in_avals, out_avals: jit_params(
        params["jaxpr"],
        params["name"],
        **{k: v for k, v in params.items() if k not in ("jaxpr", "name")},
    ),
)


def jit_params(jaxpr: ClosedJaxpr, name: str, **overrides) -> dict:
    """The full params of a ``jit_p`` equation calling ``jaxpr``."""
    n_in, n_out = len(jaxpr.in_avals), len(jaxpr.out_avals)
    params = dict(
        jaxpr=jaxpr,
        in_shardings=(UNSPECIFIED,) * n_in,
        out_shardings=(UNSPECIFIED,) * n_out,
        in_layouts=(None,) * n_in,
        out_layouts=(None,) * n_out,
        donated_invars=(False,) * n_in,
        ctx_mesh=None,
        name=name,
        keep_unused=False,
        inline=False,
        compiler_options_kvs=(),
    )
    params.update(overrides)
    return params


def call_jaxpr(closed_jaxpr: ClosedJaxpr, *args, name: str = "jaxpr", **params):
    """Binds ``jit_p`` on a traced ``closed_jaxpr``; constants that are tracers of
    enclosing traces become leading arguments, as JAX does, so the equation only
    holds concrete constants."""
    n_args = len(args)
    closed_jaxpr, args = _refs_as_arguments(closed_jaxpr, args)
    if "donated_invars" in params and len(args) > n_args:
        params["donated_invars"] = (*params["donated_invars"], *[False] * (len(args) - n_args))
    if "in_shardings" in params and len(args) > n_args:  # references trail
        params["in_shardings"] = (*params["in_shardings"], *[UNSPECIFIED] * (len(args) - n_args))
    jaxpr, consts = closed_jaxpr.jaxpr, closed_jaxpr.consts
    traced = [isinstance(c, Tracer) for c in consts]
    if any(traced):
        moved = [v for v, t in zip(jaxpr.constvars, traced, strict=True) if t]
        kept = [v for v, t in zip(jaxpr.constvars, traced, strict=True) if not t]
        jaxpr = jaxpr.replace(constvars=kept, invars=moved + jaxpr.invars)
        closed_jaxpr = ClosedJaxpr(jaxpr, [c for c, t in zip(consts, traced, strict=True) if not t])
        args = (*[c for c, t in zip(consts, traced, strict=True) if t], *args)
    if "donated_invars" in params and len(params["donated_invars"]) < len(args):
        extra = len(args) - len(params["donated_invars"])
        params["donated_invars"] = (False,) * extra + tuple(params["donated_invars"])
    if "in_shardings" in params and len(params["in_shardings"]) < len(args):
        extra = len(args) - len(params["in_shardings"])  # moved constants lead
        params["in_shardings"] = (UNSPECIFIED,) * extra + tuple(params["in_shardings"])
    return jit_p.bind(*args, **jit_params(closed_jaxpr, name, **params))


def _refs_as_arguments(closed: ClosedJaxpr, args):
    """Constants that are references become trailing arguments, as JAX passes them."""
    jaxpr = closed.jaxpr
    is_ref = [type(v.aval) is AbstractRef for v in jaxpr.constvars]
    if not any(is_ref):
        return closed, args
    pairs = list(zip(jaxpr.constvars, closed.consts, is_ref, strict=True))
    jaxpr = jaxpr.replace(
        constvars=[v for v, _, r in pairs if not r],
        invars=[*jaxpr.invars, *[v for v, _, r in pairs if r]],
    )
    closed = ClosedJaxpr(jaxpr, [c for _, c, r in pairs if not r])
    return closed, (*args, *[c for _, c, r in pairs if r])


def _jit_discharge(in_avals, out_avals, *args, jaxpr: ClosedJaxpr, **params):
    discharged = discharge_state(jaxpr)
    outs = jit_p.bind(
        *args,
        **jit_params(
            discharged.jaxpr,
            params["name"],
            donated_invars=params["donated_invars"],
            keep_unused=params["keep_unused"],
            inline=params["inline"],
        ),
    )
    n = len(out_avals)
    return discharged.new_values(args, outs[n:]), outs[:n]


jit_p.def_discharge(_jit_discharge)


def call_staged(fun, *args, name: str | None = None, inline: bool = False, **params):
    """Calls ``fun(*args)`` (flat positional arrays in, a sequence out) as one ``jit``
    equation of the current trace; with ``inline=True``, as if called directly."""
    if inline:
        return list(fun(*args))
    name = name or getattr(fun, "__name__", "fun")
    in_avals = [shaped_abstractify(x) for x in args]
    closed_jaxpr, _ = trace_to_jaxpr(fun, in_avals, describe_function(fun))
    return call_jaxpr(closed_jaxpr, *args, name=name, **params)
