"""What kernels are written with: reference views, masked memory access, control
flow, scoped buffers, arithmetic helpers and debugging."""
