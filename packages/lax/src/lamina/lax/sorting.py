"""sort, top_k, approx_max_k/approx_min_k."""

__all__: list[str] = []
