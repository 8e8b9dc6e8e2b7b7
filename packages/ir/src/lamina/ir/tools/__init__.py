"""Tools over Jaxpr text: statistics, Graphviz output, structural differences, and the
command line (``python -m lamina.ir``)."""
