"""The program fuzzer (see test_fuzz.py)."""
