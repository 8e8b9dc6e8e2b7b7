"""gather and scatter with full dimension numbers and every GatherScatterMode."""

__all__: list[str] = []
