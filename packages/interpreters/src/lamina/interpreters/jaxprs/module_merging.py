"""Merging one MLIR module into another: the functions of the source module move into
the destination, private, renamed where their names are taken, and its ``main`` under
a name of the caller's choosing."""

from __future__ import annotations

from lamina.interpreters.core.mlir_bindings import ir

__all__ = ["merge_modules"]


def _symbol_names(module: ir.Module) -> list[str]:
    return [
        ir.StringAttr(op.attributes["sym_name"]).value
        for op in module.body.operations
        if "sym_name" in op.attributes
    ]


def _free_name(wanted: str, taken: set[str]) -> str:
    if wanted not in taken:
        return wanted
    i = 0
    while f"{wanted}_{i}" in taken:
        i += 1
    return f"{wanted}_{i}"


def merge_modules(
    dst: ir.Module, sym_name: str, src: ir.Module, dst_symtab: ir.SymbolTable | None = None
) -> str:
    """Moves every symbol of ``src`` into ``dst``, private. ``src``'s ``main`` is renamed
    ``sym_name``, or that name with ``_0``, ``_1``, ... when the name is taken in either
    module; other symbols keep their names unless ``dst`` has them. Names in ``dst`` never
    change (``dst_symtab``, the symbol table of ``dst`` if the caller holds one, learns
    the new symbols). Returns the new name of ``main``; ``src`` is left empty."""
    dst_names = set(_symbol_names(dst))
    src_names = _symbol_names(src)
    if "main" not in src_names:
        raise ValueError("the source module has no function named 'main'")
    taken = dst_names | set(src_names)
    symbols = [op for op in src.body.operations if "sym_name" in op.attributes]
    main_name = None
    for op in symbols:  # renamed inside src first, so every use follows
        old = ir.StringAttr(op.attributes["sym_name"]).value
        if old == "main":
            # src's own ``main`` is being renamed: only dst's ``main`` blocks that name
            pool = taken if "main" in dst_names else taken - {"main"}
            new = main_name = _free_name(sym_name, pool)
        elif old in dst_names:
            new = _free_name(old, taken)
        else:
            new = old
        if new != old:
            ir.SymbolTable.replace_all_symbol_uses(old, new, src.operation)
            ir.SymbolTable.set_symbol_name(op, new)
            taken.add(new)
        ir.SymbolTable.set_visibility(op, "private")
    for op in list(src.body.operations):
        dst.body.append(op)
        if dst_symtab is not None and "sym_name" in op.attributes:
            dst_symtab.insert(op)
    return main_name
