"""Binary elementwise primitives: rem, pow, atan2, nextafter, clamp, complex, and the
bitwise, shift and bit-counting primitives.
"""

__all__: list[str] = []
