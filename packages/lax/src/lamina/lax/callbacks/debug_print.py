"""``debug_print``: ``str.format`` printing from programs (``jax.debug.print``), and
``debug_log`` (the same through the ``logging`` module).

Formatting happens on the host when the program runs: the arguments arrive as arrays
on the CPU and format as arrays do (``{x}`` of an array is NumPy's ``str``, of a
scalar its Python value; ``{x:.2f}`` works on scalars), under the NumPy print options
current when ``debug_print`` was called.
"""

from __future__ import annotations

import copy
import functools
import logging
import string
import sys

import numpy as np

from lamina.interpreters import errors
from lamina.ir import Primitive
from lamina.lax.callbacks.debug_callback import (
    debug_effect,
    def_debug_rules,
    lower_debug_callback,
    merge_callback_args,
    ordered_debug_effect,
    run_debug_callback,
    split_callback_args,
)

__all__ = ["debug_log", "debug_print", "debug_print_p"]

logger = logging.getLogger("lamina.debug")


class _FormatChecker(string.Formatter):
    """Checks that a format string uses every argument (and formats nothing)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                'You may be passing an f-string (i.e, `f"{x}"`) into '
                "`jax.debug.print` and instead should pass in a regular string."
            )


_checker = _FormatChecker()


def _print(fmt, np_printoptions, has_placeholders, logging_record, *args, **kwargs):
    if has_placeholders:
        with np.printoptions(**np_printoptions):
            message = fmt.format(*args, **kwargs)
    else:
        message = " ".join((fmt, *(str(a) for a in args)))
    if logging_record is not None:
        record = copy.copy(logging_record)
        record.msg = message
        logger.handle(record)
    else:
        sys.stdout.write(message + "\n")


def _printer(fmt, in_tree, static_args, np_printoptions, has_placeholders, logging_record):
    """The flat callback printing one message."""

    def flat(*dynamic):
        args, kwargs = merge_callback_args(in_tree, dynamic, dict(static_args))
        _print(fmt, dict(np_printoptions), has_placeholders, logging_record, *args, **kwargs)

    return flat


def _effect(params):
    return ordered_debug_effect if params["ordered"] else debug_effect


debug_print_p = Primitive("debug_print")


def _impl(*args, fmt, ordered, partitioned, in_tree, static_args, np_printoptions,
          has_placeholders, logging_record):  # fmt: skip
    printer = _printer(fmt, in_tree, static_args, np_printoptions, has_placeholders,
                       logging_record)  # fmt: skip
    return run_debug_callback(printer, args)


def _lowering(ctx, *args, ordered, partitioned, **params):
    def host(*flat_args):
        _impl(*flat_args, ordered=ordered, partitioned=partitioned, **params)

    effect = ordered_debug_effect if ordered else debug_effect
    return lower_debug_callback(ctx, args, host, effect, partitioned)


debug_print_p.def_impl(_impl)
def_debug_rules(debug_print_p, _effect, _lowering)


def _logging_record(level: int):
    frame = errors.user_frame()
    file_name, line_no = "(unknown file)", 0
    if frame is not None:
        file_name, line_no = frame.file_name, frame.start_line
    return logger.makeRecord(logger.name, level, file_name, line_no, "", (), None)


def debug_print(
    fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
    _use_logging=False, **kwargs,
):  # fmt: skip
    """Print ``fmt.format(*args, **kwargs)`` when the program runs (not when it is
    traced); pass values as arguments, not in an f-string. ``ordered=True`` keeps
    program order among ordered callbacks. Without ``fmt`` returns a function taking
    ``fmt, *args, **kwargs``."""

    def _debug_print(fmt, *c_args, **c_kwargs):
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field is not None
        in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)
        debug_print_p.bind(
            *dynamic,
            fmt=fmt,
            ordered=ordered,
            partitioned=partitioned,
            in_tree=in_tree,
            static_args=tuple(static.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=has_placeholders,
            logging_record=_logging_record(logging.INFO) if _use_logging else None,
        )

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return _debug_print


debug_log = functools.partial(debug_print, _use_logging=True)
