"""Jaxprs: staging Python functions out to Jaxprs (:mod:`.staging`, with ``make_jaxpr``
and ``eval_shape`` in :mod:`.trace_api`), the ``jit`` call primitive and evaluation of
Jaxprs (:mod:`.calls`), caches keyed on Jaxprs (:mod:`.jaxpr_cache`), tokens
(:mod:`.tokens`) and lowering to StableHLO (:mod:`.lowering`, :mod:`.mlir_builders`).
Built on :mod:`..core` only."""
