"""Reference results from other programs (Exudyn), for tests."""
