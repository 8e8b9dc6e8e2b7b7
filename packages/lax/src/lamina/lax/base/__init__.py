"""The base tier of lax: what every family of primitives is written with."""
