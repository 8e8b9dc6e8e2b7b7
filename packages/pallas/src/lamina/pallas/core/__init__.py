"""The kernel description: block specs, grid specs, memory spaces, the grid environment."""
