"""gather and scatter with full dimension numbers and every GatherScatterMode: the
gather primitive in :mod:`._gather`, the scatter family in :mod:`._scatter`, their
derivatives in :mod:`._scatter_ad`."""

import lamina.lax._scatter_ad  # noqa: F401  (registers the scatter derivatives)
from lamina.lax._gather import *  # noqa: F403
from lamina.lax._gather import __all__ as _gather_names
from lamina.lax._scatter import *  # noqa: F403
from lamina.lax._scatter import __all__ as _scatter_names

__all__: list[str] = [*_gather_names, *_scatter_names]
