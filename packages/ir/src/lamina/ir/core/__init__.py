"""The IR itself: abstract values, primitives and their rule tables, and Jaxprs with their
equality and printed text (laid out by a small document library)."""
