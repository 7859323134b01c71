"""Schedules and their primitives (split, fuse, reorder, tile, unroll,
vectorize, parallel, pragma, compute_at/inline/root, cache_read/write,
tensorize).  Each primitive's docstring states its index arithmetic."""

from aot.schedule.schedule import (  # noqa: F401
    Fuse, Schedule, ScheduleError, Split, Stage, create_schedule,
)
