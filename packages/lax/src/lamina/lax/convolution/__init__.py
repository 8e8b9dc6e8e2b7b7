"""Convolutions: the conv_general_dilated primitive, its dimension numbers and padding,
and the convolution functions built on it."""
