"""The runtime: jaxlib backends and devices (:mod:`.backend`), shardings
(:mod:`.sharding`), ``Array`` (:mod:`.array`, :mod:`.cpp_classes`), host/device transfers
and the ``device_put`` primitive (:mod:`.transfer`, :mod:`.device_put_primitive`), DLPack
(:mod:`.dlpack`), arrays of extended dtypes (:mod:`.extended`), running compiled
StableHLO (:mod:`.execute`), compiling and caching Jaxprs (:mod:`.executables`), the
plumbing of jaxlib's C++ ``pjit`` dispatch (:mod:`.cpp_pjit`) and eager dispatch of
primitives (:mod:`.dispatch`). Built on :mod:`..core` and :mod:`..jaxprs`."""
