"""The ``nan_policy`` argument of ``rankdata`` and ``mode``."""


def check_nan_policy(fun_name: str, nan_policy: str) -> None:
    """JAX's errors for a ``nan_policy`` other than 'propagate' (the only one traced
    code can honour without knowing whether the data holds nans)."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{fun_name}`, we cannot know whether `x` "
            "contains nans. Please check if nans exist in `x` outside of the "
            f"`{fun_name}` function."
        )
