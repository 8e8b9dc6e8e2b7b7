"""`lamina.example_libraries`: JAX's small example libraries, ``stax`` (neural network
layers) and ``optimizers`` (first-order optimizers as init/update/get_params triples)."""
