"""Polynomials as 1-D coefficient arrays, highest power first: arithmetic
(``polyadd``, ``polyval``, ...) and what needs linear algebra (``roots``,
``polyfit``)."""
