"""Collectives over named axes, with the semantics vmap(..., axis_name=...) gives them."""
