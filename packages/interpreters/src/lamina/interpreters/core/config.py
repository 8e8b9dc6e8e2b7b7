"""``lamina.config``: JAX's configuration options, as far as lamina implements them.

Each option is read as an attribute (``config.jax_enable_x64``) and set with
``config.update(name, value)``. Its starting value comes from the environment variable
of the same name in capitals (``JAX_ENABLE_X64=1``), as in JAX.

Values live in jaxlib's C++ ``Config`` holders. That gives each option a process-wide
value plus a per-thread override (what the context managers set), and it lets jaxlib's
C++ side see the options it reads itself: x64 mode (when it canonicalizes host values)
and ``jax_disable_jit`` (in its jit fast path). Options marked ``jit_key`` are part of
``trace_context()``, the tuple a jit cache keys on.

x64 mode is owned by :mod:`lamina.ir.dtypes` (which reads ``JAX_ENABLE_X64`` itself);
the option here forwards to it and keeps jaxlib's copy in step. Change it through this
module (``update`` or :func:`enable_x64`), not through ``dtypes`` directly, or jaxlib's
copy falls behind.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from jaxlib import _jax

from lamina.ir import dtypes, set_traceback_filtering_source

__all__ = [
    "Config",
    "config",
    "disable_jit",
    "enable_x64",
    "softmax_custom_jvp",
    "trace_context",
]

_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")

MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)  # fmt: skip
TRACEBACK_FILTERING_MODES = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")

# --------------------------------------------------------------------- parsing values


def _bool_from_env(text: str, env_name: str) -> bool:
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"invalid truth value {low!r} for environment {env_name!r}")


def _check_int(value: Any) -> int | None:
    if value is not None and not isinstance(value, int):
        raise ValueError(
            f"new int config value must be None or of type int, got {value} of type {type(value)}"
        )
    return value


def _check_str(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(
            "new string config value must be None or of type str, "
            f"got {value} of type {type(value)}."
        )
    return value


def _check_precision(value: Any) -> str | None:
    if value is not None and value not in MATMUL_PRECISIONS:
        raise ValueError(
            f"new enum value must be None or in {list(MATMUL_PRECISIONS)}, "
            f"got {value} of type {type(value)}."
        )
    return value


# --------------------------------------------------------------------- options


class _Option:
    """One option: its jaxlib holder, how to check a new value, and who to tell."""

    def __init__(
        self,
        name: str,
        default: Any,
        check: Callable[[Any], Any],
        from_env: Callable[[str], Any],
        jit_key: bool = False,
    ):
        self.name = name
        env = os.environ.get(name.upper())
        start = default if env is None else from_env(env)
        self.check = check
        # Functions called with a new value before it is stored; they may raise.
        self.validators: list[Callable[[Any], None]] = []
        self.holder = _jax.config.Config(
            name, start, include_in_jit_key=jit_key, include_in_trace_context=jit_key
        )

    @property
    def value(self) -> Any:
        return self.holder.value

    def set(self, value: Any) -> None:
        value = self.check(value)
        for validate in self.validators:
            validate(value)
        self.holder.set_global(value)


class _X64Option(_Option):
    """``jax_enable_x64``: the value lives in ``lamina.ir.dtypes``; jaxlib gets a copy."""

    def __init__(self):
        super().__init__("jax_enable_x64", False, bool, lambda s: None, jit_key=True)
        self.holder.set_global(dtypes.x64_enabled())  # dtypes read JAX_ENABLE_X64

    @property
    def value(self) -> bool:
        return dtypes.x64_enabled()

    def set(self, value: Any) -> None:
        value = bool(value)
        dtypes.set_x64(value)
        self.holder.set_global(value)


def _int_from_env(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f'Invalid value "{text}" for JAX flag {name}') from None

    return parse


def _precision_from_env(text: str) -> str:
    if text not in MATMUL_PRECISIONS:
        raise ValueError(f'Invalid value "{text}" for JAX flag jax_default_matmul_precision')
    return text


def _enum_option(name: str, default: str, values: tuple[str, ...]) -> _Option:
    def check(value: Any) -> str:
        if value not in values:
            raise ValueError(
                f"new enum value must be in {list(values)}, got {value} of type {type(value)}."
            )
        return value

    def from_env(text: str) -> str:
        if text not in values:
            raise ValueError(f'Invalid value "{text}" for JAX flag {name}')
        return text

    return _Option(name, default, check, from_env)


def _bool_option(name: str, **kw) -> _Option:
    return _Option(name, False, bool, lambda s: _bool_from_env(s, name.upper()), **kw)


_options: dict[str, _Option] = {
    opt.name: opt
    for opt in [
        _X64Option(),
        _bool_option("jax_disable_jit", jit_key=True),
        _bool_option("jax_debug_nans"),
        _bool_option("jax_debug_infs"),
        _bool_option("jax_log_compiles"),
        # jax.nn.softmax differentiates by its custom JVP rule instead of its formula.
        _bool_option("jax_softmax_custom_jvp", jit_key=True),
        _Option("jax_num_cpu_devices", -1, _check_int, _int_from_env("jax_num_cpu_devices")),
        _Option("jax_platforms", None, _check_str, lambda s: s),
        _enum_option("jax_traceback_filtering", "auto", TRACEBACK_FILTERING_MODES),
        _Option(
            "jax_default_matmul_precision", None, _check_precision, _precision_from_env,
            jit_key=True,
        ),
    ]
}  # fmt: skip

# jaxlib's C++ code reads these two holders directly.
_jax.jax_jit.set_enable_x64_state(_options["jax_enable_x64"].holder)
_jax.jax_jit.set_disable_jit_state(_options["jax_disable_jit"].holder)
# lamina.ir filters tracebacks (lamina.ir.tracebacks) as this option says.
set_traceback_filtering_source(lambda: _options["jax_traceback_filtering"].value)


class Config:
    """The options object, ``lamina.config``: ``config.update(name, value)`` and
    ``config.<name>`` reads."""

    def update(self, name: str, value: Any) -> None:
        option = _options.get(name)
        if option is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        option.set(value)

    def read(self, name: str) -> Any:
        option = _options.get(name)
        if option is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        return option.value

    def __getattr__(self, name: str) -> Any:
        option = _options.get(name)
        if option is None:
            raise AttributeError(f"'Config' object has no attribute '{name}'")
        return option.value

    @property
    def x64_enabled(self) -> bool:
        return dtypes.x64_enabled()

    @property
    def values(self) -> dict[str, Any]:
        return {name: option.value for name, option in _options.items()}

    def __dir__(self):
        return [*super().__dir__(), *_options]

    def _add_validator(self, name: str, validate: Callable[[Any], None]) -> None:
        """Have ``validate(new_value)`` run (and possibly raise) before ``name`` changes."""
        _options[name].validators.append(validate)


config = Config()


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Within the block, in this thread, x64 mode is ``new_val``."""
    holder = _options["jax_enable_x64"].holder
    previous = holder.swap_local(bool(new_val))
    try:
        with dtypes.enable_x64(bool(new_val)):
            yield
    finally:
        holder.set_local(previous)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Within the block, in this thread, ``jit`` runs functions without compiling them."""
    holder = _options["jax_disable_jit"].holder
    previous = holder.swap_local(bool(disable))
    try:
        yield
    finally:
        holder.set_local(previous)


class _ThreadLocalOption:
    """A JAX ``State``-like handle on a boolean option: ``.value`` reads it, and
    ``handle(new_val=True)`` is a context manager setting it in this thread."""

    def __init__(self, name: str):
        self._option = _options[name]

    @property
    def value(self) -> bool:
        return self._option.value

    @contextlib.contextmanager
    def __call__(self, new_val: bool = True) -> Iterator[None]:
        holder = self._option.holder
        previous = holder.swap_local(self._option.check(new_val))
        try:
            yield
        finally:
            holder.set_local(previous)


softmax_custom_jvp = _ThreadLocalOption("jax_softmax_custom_jvp")
# jax.log_compiles: compiles log at WARNING level within the block.
log_compiles = _ThreadLocalOption("jax_log_compiles")


def trace_context() -> tuple:
    """The values of the options a jit cache must key on, as jaxlib's C++ side sees them."""
    return _jax.config.trace_context()
