"""conv_general_dilated and its helpers."""

__all__: list[str] = []
