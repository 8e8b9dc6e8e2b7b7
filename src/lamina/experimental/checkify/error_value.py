"""``Error``: the value a checkified function returns beside its outputs.

For each kind of failure seen (an :class:`ErrorEffect`) it holds whether one happened
(``_pred``), the code of the first check that failed (``_code``) and that check's
payload (``_payload``); ``_metadata`` maps each code to the structure of its exception.
Under ``vmap`` the arrays gain batch dimensions and ``get`` reports each failing index.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

import lamina.numpy as jnp
from lamina import lax
from lamina.experimental.checkify.check_primitive import bind_check
from lamina.experimental.checkify.failures import BatchedError, ErrorEffect, JaxException
from lamina.ir.tree_util import (
    register_pytree_node_class,
    tree_flatten,
    tree_map,
    tree_unflatten,
)

__all__ = ["Error", "assert_func", "init_error", "update_error"]


@register_pytree_node_class
@dataclasses.dataclass(frozen=True)
class Error:
    _pred: dict
    _code: dict
    _metadata: dict
    _payload: dict

    def get(self) -> str | None:
        """The message of the first failure, or None if no check failed."""
        exc = self.get_exception()
        return None if exc is None else str(exc)

    def get_exception(self) -> JaxException | None:
        """The exception of the first failure, or None if no check failed."""
        if any(np.shape(p) for p in self._pred.values()):
            return self._batched_exception()
        first = None
        for effect, code in self._code.items():
            if self._pred[effect] and (first is None or int(code) < first[0]):
                first = (int(code), effect)
        if first is None:
            return None
        return tree_unflatten(self._metadata[first[0]], self._payload[first[1]])

    def _batched_exception(self) -> BatchedError | None:
        shape = next(np.shape(p) for p in self._pred.values() if np.shape(p))
        preds = {e: np.broadcast_to(np.asarray(p), shape) for e, p in self._pred.items()}
        codes = {e: np.broadcast_to(np.asarray(c), shape) for e, c in self._code.items()}
        failures = {}
        for idx in np.ndindex(*shape):
            first = None
            for effect, code in codes.items():
                if preds[effect][idx] and (first is None or code[idx] < first[0]):
                    first = (int(code[idx]), effect)
            if first is not None:
                payload = tree_map(lambda x, i=idx: _at(x, i, shape), self._payload[first[1]])
                failures[idx] = tree_unflatten(self._metadata[first[0]], payload)
        return BatchedError(failures) if failures else None

    def throw(self) -> None:
        """Raises ``JaxRuntimeError`` if a check failed (a functionalizable effect)."""
        bind_check(self, debug=False)

    def __str__(self):
        return f"Error({self.get()})"

    def _update(self, effect, pred, code, metadata, payload) -> Error:
        return Error(
            {**self._pred, effect: pred},
            {**self._code, effect: code},
            {**self._metadata, **metadata},
            {**self._payload, effect: payload},
        )

    def _add_placeholder_effects(self, effects) -> Error:
        """The same error, with never-failing entries for the ``effects`` it lacks."""
        pred, code, payload = dict(self._pred), dict(self._code), dict(self._payload)
        for effect in effects:
            if effect not in pred:
                pred[effect] = np.bool_(False)
                code[effect] = np.int32(-1)
                payload[effect] = [np.ones(s, d) for s, d in effect.shape_dtypes]
        return Error(pred, code, self._metadata, payload)

    def _with_metadata(self, metadata: dict) -> Error:
        return dataclasses.replace(self, _metadata=metadata)

    def tree_flatten(self):
        return (self._pred, self._code, self._payload), tuple(sorted(self._metadata.items()))

    @classmethod
    def tree_unflatten(cls, metadata, children):
        pred, code, payload = children
        return cls(pred, code, dict(metadata), payload)


def _at(x, idx, shape):
    """Element ``idx`` of a batched payload value (unbatched values are shared)."""
    lead = np.shape(x)[: len(shape)]
    if lead != tuple(shape):
        return x
    return x[idx]


init_error = Error({}, {}, {}, {})  # no check has failed yet
_codes = itertools.count(1)  # one code per check made, in program (tracing) order


def next_code() -> int:
    return next(_codes)


def _strong(x):
    """``x`` as an array without a weak type, so loop carries keep one type."""
    x = jnp.asarray(x)
    return lax.convert_element_type(x, x.dtype) if getattr(x, "weak_type", False) else x


def update_error(error: Error, pred, code, metadata: dict, payload, effect: ErrorEffect) -> Error:
    """``error`` with a failure of ``effect`` recorded where ``pred`` holds, unless one
    of that kind happened first."""
    before = jnp.asarray(error._pred.get(effect, np.bool_(False)))
    out_pred = jnp.logical_or(before, pred)
    old_code = error._code.get(effect, np.int32(-1))
    new_code = np.int32(code) if isinstance(code, int) else code
    out_code = lax.select(before, _strong(old_code), _strong(new_code))
    payload = [_strong(p) for p in payload]
    old_payload = error._payload.get(effect)
    if old_payload is not None:
        pairs = zip(old_payload, payload, strict=True)
        payload = [lax.select(_bcast(before, p), _strong(o), p) for o, p in pairs]
    return error._update(effect, out_pred, out_code, metadata, payload)


def _bcast(pred, x):
    shape = np.shape(x)
    return pred if not shape else jnp.broadcast_to(pred, shape)


def assert_func(error: Error, pred, failure: JaxException) -> Error:
    """``error`` updated with ``failure`` (a new check, given a fresh code) where ``pred``."""
    code = next_code()
    payload, structure = tree_flatten(failure)
    return update_error(error, pred, code, {code: structure}, payload, failure.get_effect_type())
