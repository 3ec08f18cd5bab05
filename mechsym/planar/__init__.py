"""Planar mechanisms with closed loops: the declaration (model, topology, loads, force elements' planar
terms), the symbolic constraints and equations, kinematics, velocity and acceleration coefficients,
dynamics (the reduced form, inverse and forward), runs of several coordinates (simulate, stickslip),
rolling contact and stance on a track, and the mechanism's codegen spec. It uses core and codegen only;
spatial, contact, studies and the command line build on it (tests/test_layers.py checks).
"""
