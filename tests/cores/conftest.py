"""Fixtures of the multi-core tests: the firmware tests' session object cache."""

from firmware.conftest import object_cache  # noqa: F401  (one home for the fixture)
