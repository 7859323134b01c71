"""Fixtures for RPC tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def device(host_firmware):
    """A connected client on a fresh host-port process."""
    from aot.rpc import PipeTransport, connect

    client = connect(PipeTransport([str(host_firmware)]), timeout=2.0, retries=1)
    yield client
    client.close()
