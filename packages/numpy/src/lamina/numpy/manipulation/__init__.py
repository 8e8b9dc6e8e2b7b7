"""Shape manipulation: reshaping, transposing and broadcasting, editing
(``insert``, ``delete``, ``append``), rearranging (``flip``, ``roll``, ...), repeating,
stacking and splitting, and padding."""
