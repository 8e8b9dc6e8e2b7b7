"""Making arrays: conversion (``array``, ``asarray``, ``astype``, ``copy``,
``from_dlpack``), filled arrays, ranges, matrices, window functions, host-side readers
and writers, index grids (``mgrid``, ``r_``, ...) and the scalar types (``jnp.float32``,
...)."""
