"""The pytree engine under lamina.ir.tree_util: path keys, node kinds, PyTreeDef and its
registries, node registration, and the errors that explain mismatched structures."""
