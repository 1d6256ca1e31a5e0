"""The benchmark harness's tests share the unit tests' fixtures: a private vector cache, fast embeddings."""

from tests.unit_tests.conftest import _private_vector_cache, bow  # noqa: F401  (fixtures, registered by import)
