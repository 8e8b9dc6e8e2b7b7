"""Special functions: error functions, gamma family, Bessel, zeta, incomplete gamma and beta."""
