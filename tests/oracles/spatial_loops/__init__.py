"""Independent references for spatial mechanisms with closed loops (README.md): Pinocchio's constrained
dynamics, a maximal-coordinate formulation, sympy.physics.mechanics and Exudyn."""
