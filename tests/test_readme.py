"""Kept only for tests/test_distributed.py, which imports ``blocks`` from here to find the Dask
example (now in docs/guide/distributed.md). The documentation's tests are in tests/test_docs.py;
once test_distributed.py imports ``from test_docs import blocks``, this file can go."""

from test_docs import blocks  # noqa: F401
