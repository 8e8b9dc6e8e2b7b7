"""Dynamic slicing, gather and scatter: indexing at run-time positions."""
