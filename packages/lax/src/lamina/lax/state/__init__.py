"""Mutable array references: indexing, reading and writing, allocation."""
