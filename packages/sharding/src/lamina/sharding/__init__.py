"""lamina.sharding: meshes, shardings, `shard_map`, `pmap` and multi-process support.

Not built yet: this layer is an importable placeholder with its declared dependencies."""
