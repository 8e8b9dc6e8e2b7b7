"""``jit``: the jitted function (:mod:`.jit`), its argument handling (:mod:`.jit_args`),
its stages API (:mod:`.stages`) and its C++ fast path (:mod:`.fastpath`). The top tier;
it does not use the transformations."""
