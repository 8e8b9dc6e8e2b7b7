"""Not written yet."""

__all__: list[str] = []
