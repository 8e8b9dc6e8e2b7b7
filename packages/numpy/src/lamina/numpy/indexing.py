"""Not written yet: ``x[idx]`` and ``x.at[idx]``."""

__all__: list[str] = []
