"""The transformations: batching (:mod:`.batching`), forward mode (:mod:`.ad`), partial
evaluation (:mod:`.partial_eval`), reverse mode (:mod:`.reverse`), Jacobians
(:mod:`.jacobians`), ``stop_gradient``, custom derivative rules (:mod:`.custom_calls`,
:mod:`.custom_jvp`, :mod:`.custom_vjp`, :mod:`.custom_derivatives`), rematerialisation
(:mod:`.checkpoint` and its helpers) and lowering of extended dtypes through batching
(:mod:`.extended_lowering`). Built on the tiers below."""
