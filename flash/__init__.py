"""Runners that put firmware on a device and open its byte stream."""
