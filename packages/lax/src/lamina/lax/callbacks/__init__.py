"""Calling Python from programs: ``pure_callback``, ``io_callback`` and the debugging
callbacks (``debug_callback``, ``debug_print``)."""
