"""Reading Jaxpr text back into Jaxprs: the lexer, the readers of param values and the
parser."""
