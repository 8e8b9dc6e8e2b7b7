"""The fft primitive."""

__all__: list[str] = []
