"""How a configuration option holds its value: :class:`State`, :class:`Flag` and the
options object :class:`Config`, with the value kinds JAX's options come in.

A :class:`State` is one of jaxlib's C++ ``Config`` holders: a process-wide value plus a
per-thread override, which jaxlib's C++ side can read too. Options marked ``jit_key``
are part of the key of jaxlib's C++ jit cache and options marked ``trace`` are part of
``trace_context()``, the tuple lamina's own caches key on. Calling a state gives an
:class:`Override`: a context manager setting the value in this thread, and a decorator
doing the same around each call. A :class:`Flag` is a plain process-wide value.

Each option's starting value comes from the environment variable of its name in
capitals (``JAX_DEBUG_NANS=1``), parsed by its kind as JAX parses it.
"""

from __future__ import annotations

import enum
import functools
import itertools
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from jaxlib import _jax

__all__ = [
    "Config",
    "Flag",
    "Override",
    "State",
    "bool_state",
    "config",
    "enum_class_state",
    "enum_state",
    "flag",
    "float_state",
    "int_state",
    "object_state",
    "string_state",
]

_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE = _NoValue()


def bool_from_env(text: str, env_name: str) -> bool:
    """A truth value as JAX reads it from the environment."""
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"invalid truth value {low!r} for environment {env_name!r}")


class State(_jax.config.Config):
    # An option with a per-thread override (see the module docstring; each instance's
    # __doc__ describes its option). ``parse`` checks and converts a new value (raising
    # as JAX does); ``on_global`` is told each new process-wide value;
    # ``local_context(value)`` gives a context manager entered while an Override is in
    # force, for state kept outside the holder.

    __slots__ = (
        "__doc__",
        "__name__",
        "local_context",
        "name",
        "on_global",
        "override_default",
        "parse",
        "validators",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        default: Any,
        parse: Callable[[Any], Any],
        *,
        jit_key: bool = False,
        trace: bool = False,
        override_default: Any = NO_VALUE,
        on_global: Callable[[Any], None] | None = None,
        local_context: Callable[[Any], AbstractContextManager] | None = None,
    ):
        super().__init__(name, default, include_in_jit_key=jit_key, include_in_trace_context=trace)
        self.name = name
        self.parse = parse
        self.on_global = on_global
        self.local_context = local_context
        self.override_default = override_default
        # Functions called with a new process-wide value before it is stored; they may raise.
        self.validators: list[Callable[[Any], None]] = []
        self.__name__ = name.removeprefix("jax_")
        self.__doc__ = (
            f"Context manager and decorator setting the ``{name}`` option in this thread."
        )
        if on_global is not None:
            on_global(default)

    def __bool__(self):
        raise TypeError(
            "bool() not supported for instances of type 'State' "
            "(did you mean to use 'State.value' instead?)"
        )

    def __repr__(self) -> str:
        return f"<lamina config option {self.name}={self.value!r}>"

    def set(self, value: Any) -> None:
        """Set the process-wide value (``config.update``)."""
        value = self.parse(value)
        for validate in self.validators:
            validate(value)
        self.set_global(value)
        if self.on_global is not None:
            self.on_global(value)

    def __call__(self, new_val: Any = NO_VALUE) -> Override:
        if new_val is NO_VALUE:
            new_val = self.override_default
            if new_val is NO_VALUE:
                raise TypeError(
                    f"Context manager for {self.__name__} config option requires an "
                    "argument representing the new value for the config option."
                )
        return Override(self, self.parse(new_val))


class Override:
    """A state set to a value in this thread: ``with`` it, or decorate a function (or a
    class, which then becomes a function building instances within the override)."""

    __slots__ = ("_saved", "state", "value")

    def __init__(self, state: State, value: Any):
        self.state = state
        self.value = value
        self._saved: list[tuple[Any, AbstractContextManager | None]] = []

    def __enter__(self) -> None:
        previous = self.state.swap_local(self.value)
        context = None
        if self.state.local_context is not None:
            context = self.state.local_context(self.value)
            try:
                context.__enter__()
            except BaseException:
                self.state.set_local(previous)
                raise
        self._saved.append((previous, context))

    def __exit__(self, *exc_info) -> None:
        previous, context = self._saved.pop()
        try:
            if context is not None:
                context.__exit__(*exc_info)
        finally:
            self.state.set_local(previous)

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def within(*args, **kwargs):
            with Override(self.state, self.value):
                return func(*args, **kwargs)

        return within


class Flag:
    """A process-wide option without a context manager; updates are not checked."""

    __slots__ = ("name", "on_set", "validators", "value")

    def __init__(self, name: str, default: Any, on_set: Callable[[Any], None] | None = None):
        self.name = name
        self.on_set = on_set
        self.validators: list[Callable[[Any], None]] = []
        self.set(default)

    def __bool__(self):
        raise TypeError(
            "bool() not supported for instances of type 'Flag' "
            "(did you mean to use 'Flag.value' instead?)"
        )

    def set(self, value: Any) -> None:
        for validate in self.validators:
            validate(value)
        self.value = value
        if self.on_set is not None:
            self.on_set(value)


class Config:
    """The options object, ``lamina.config``: ``config.update(name, value)``, attribute
    reads (``config.jax_debug_nans``), ``config.values`` and ``config.read``."""

    def __init__(self):
        object.__setattr__(self, "_options", {})

    def _register(self, option: State | Flag) -> None:
        if option.name in self._options:
            raise Exception(f"Config option {option.name} already defined")
        self._options[option.name] = option

    def update(self, name: str, val: Any) -> None:
        option = self._options.get(name)
        if option is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        option.set(val)

    def parse_flags_with_absl(self) -> None:
        """Apply the ``--jax_*`` options on the command line (before any ``--``):
        ``--jax_name=value``, ``--jax_name`` (true) and ``--nojax_name`` (false). Test
        suites built on absl call it; other arguments are left alone."""
        for arg in itertools.takewhile(lambda a: a != "--", sys.argv[1:]):
            name, has_value, text = arg.removeprefix("--").partition("=")
            if not arg.startswith("--"):
                continue
            value: Any = text
            if name.startswith("nojax_") and not has_value:
                name, value = name[2:], False
            elif not has_value:
                value = True
            option = self._options.get(name)
            if option is None:
                continue
            if isinstance(option.value, bool) and isinstance(value, str):
                value = bool_from_env(value, name)
            self.update(name, value)

    def read(self, name: str) -> Any:
        """The value of a flag. Options with a context manager are read as attributes
        (as in JAX, ``read`` refuses them), except ``jax_enable_x64``."""
        if isinstance(self._options.get(name), State) and name != "jax_enable_x64":
            raise AttributeError(
                "For flags with a corresponding contextmanager, read their value "
                f"via e.g. `config.{name}` rather than `config.FLAGS.{name}`."
            )
        return self._read(name)

    def _read(self, name: str) -> Any:
        option = self._options.get(name)
        if option is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        return option.value

    def __getattr__(self, name: str) -> Any:
        option = self._options.get(name)
        if not isinstance(option, State):
            raise AttributeError(f"'Config' object has no attribute '{name}'")
        return option.value

    @property
    def x64_enabled(self) -> bool:
        return self._options["jax_enable_x64"].value

    @property
    def values(self) -> dict[str, Any]:
        return {name: option.value for name, option in self._options.items()}

    def __dir__(self):
        states = [n for n, o in self._options.items() if isinstance(o, State)]
        return [*super().__dir__(), *states]

    def _add_validator(self, name: str, validate: Callable[[Any], None]) -> None:
        """Have ``validate(new_value)`` run (and possibly raise) before ``name`` changes
        process-wide."""
        self._options[name].validators.append(validate)

    def _state(self, name: str) -> State:
        """The holder of option ``name``."""
        return self._options[name]


config = Config()


# --------------------------------------------------------------------- option kinds
# Each registers an option on ``config``, reading its environment variable, and
# returns its holder. ``key`` names the caches it is part of: "jit" (jaxlib's C++ jit
# cache), "trace" (trace_context()), or both ("jit+trace").


def _env(name: str) -> str | None:
    return os.environ.get(name.upper())


def _bad_env(name: str, text: str) -> ValueError:
    return ValueError(f'Invalid value "{text}" for JAX flag {name}')


def _new_state(name: str, default: Any, parse: Callable, key: str, **kw: Any) -> State:
    state = State(name, default, parse, jit_key="jit" in key, trace="trace" in key, **kw)
    config._register(state)
    return state


def bool_state(
    name: str, default: bool, *, key: str = "", validator: Callable | None = None, **kw: Any
) -> State:
    env = _env(name)
    if env is not None:
        default = bool_from_env(env, name.upper())

    def parse(value: Any) -> bool:
        if validator is not None:
            validator(value)
        return bool(value)

    return _new_state(name, default, parse, key, override_default=True, **kw)


def enum_state(
    name: str,
    values: Sequence[str],
    default: str | None,
    *,
    optional: bool = False,
    key: str = "",
    **kw: Any,
) -> State:
    """A string out of ``values``; ``optional`` ones may also be None."""
    values = list(values)
    default = os.environ.get(name.upper(), default)
    if default is not None and default not in values:
        raise _bad_env(name, default)
    what = "None or in" if optional else "in"

    def parse(value: Any) -> str | None:
        if value is None and optional:
            return None
        if type(value) is not str or value not in values:
            raise ValueError(
                f"new enum value must be {what} {values}, got {value} of type {type(value)}."
            )
        return value

    return _new_state(name, default, parse, key, **kw)


def enum_class_state(
    name: str, enum_class: type[enum.Enum], default: enum.Enum, *, key: str = "", **kw: Any
) -> State:
    """A member of ``enum_class``, also settable by its value as a string."""
    env = _env(name)
    if env is not None:
        try:
            default = enum_class(env)
        except ValueError:
            raise _bad_env(name, env) from None

    def parse(value: Any) -> enum.Enum:
        if isinstance(value, str):
            return enum_class(value)
        if not isinstance(value, enum_class):
            raise TypeError(
                f"new enum value must be an instance of {enum_class}, got {value} "
                f"of type {type(value)}."
            )
        return value

    return _new_state(name, default, parse, key, **kw)


def int_state(
    name: str, default: int, *, key: str = "", validator: Callable | None = None, **kw: Any
) -> State:
    env = _env(name)
    if env is not None:
        try:
            default = int(env)
        except ValueError:
            raise _bad_env(name, env) from None

    def parse(value: Any) -> int | None:
        if value is not None and not isinstance(value, int):
            raise ValueError(
                "new int config value must be None or of type int, "
                f"got {value} of type {type(value)}"
            )
        if value is not None and validator is not None:
            validator(value)
        return value

    return _new_state(name, default, parse, key, **kw)


def float_state(name: str, default: float, *, key: str = "", **kw: Any) -> State:
    env = _env(name)
    if env is not None:
        try:
            default = float(env)
        except ValueError:
            raise _bad_env(name, env) from None

    def parse(value: Any) -> float | None:
        if value is not None and not isinstance(value, (float, int)):
            raise ValueError(
                "new float config value must be None or of type float, "
                f"got {value} of type {type(value)}"
            )
        return value

    return _new_state(name, default, parse, key, **kw)


def string_state(
    name: str, default: str | None, *, optional: bool = True, key: str = "", **kw: Any
) -> State:
    """A string; ``optional`` ones may also be None."""

    def validate(value: Any) -> None:
        if optional and value is not None and not isinstance(value, str):
            raise ValueError(
                "new string config value must be None or of type str, "
                f"got {value} of type {type(value)}."
            )
        if not optional and not isinstance(value, str):
            raise TypeError(
                f"new string config value must be of type str, got {value} of type {type(value)}."
            )

    return object_state(name, default, validate, key=key, **kw)


def object_state(
    name: str, default: Any, validate: Callable[[Any], None], *, key: str = "", **kw: Any
) -> State:
    """Any value ``validate`` accepts; from the environment, a string."""

    def parse(value: Any) -> Any:
        validate(value)
        return value

    return _new_state(name, os.environ.get(name.upper(), default), parse, key, **kw)


def flag(name: str, default: Any, env_parse: Callable[[str], Any] | None = None, **kw: Any) -> Flag:
    """A :class:`Flag`; its environment variable is read by ``env_parse``, by default
    according to the type of ``default``."""
    env = _env(name)
    if env is not None:
        if env_parse is not None:
            default = env_parse(env)
        elif isinstance(default, bool):
            default = bool_from_env(env, name.upper())
        elif isinstance(default, int):
            default = int(env)
        else:
            default = env
    option = Flag(name, default, **kw)
    config._register(option)
    return option
