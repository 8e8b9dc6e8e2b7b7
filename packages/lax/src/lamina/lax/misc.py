"""rng_bit_generator, rng_uniform, optimization_barrier, tokens."""

__all__: list[str] = []
