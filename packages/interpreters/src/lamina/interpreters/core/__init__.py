"""The base tier of lamina.interpreters: configuration (:mod:`.config`), the error types
(:mod:`.errors`), monitoring events (:mod:`.monitoring`), traces, tracers and ``bind``
(:mod:`.tracing`), and tangent types with symbolic zeros (:mod:`.tangents`). It
imports nothing else of the package."""
