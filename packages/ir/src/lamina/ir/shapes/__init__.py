"""Symbolic shapes: dimension expressions, their scopes and the reading of shape
specifications."""
