"""Random schedules: a sequence of primitives applied to one stage (seeded).

Shared by the schedule tests (every schedule computes what numpy computes)
and the backend difference tests (the C and LLVM code of one schedule agree).
"""

from __future__ import annotations

import random


def random_schedule(rng: random.Random, s, stage, steps=5):
    for _ in range(steps):
        leaf = stage.leaf_iter_vars
        choice = rng.choice(["split", "split", "reorder", "fuse", "unroll", "vectorize"])
        if choice == "split":
            iv = rng.choice(leaf)
            if rng.random() < 0.7:
                stage.split(iv, factor=rng.randint(1, 6))
            else:
                stage.split(iv, nparts=rng.randint(1, 4))
        elif choice == "reorder":
            order = list(leaf)
            rng.shuffle(order)
            stage.reorder(*order)
        elif choice == "fuse":
            pairs = [(a, b) for a, b in zip(leaf, leaf[1:]) if a.iter_type == b.iter_type]
            if pairs:
                stage.fuse(*rng.choice(pairs))
        elif leaf[-1] in stage.iter_attrs:
            continue  # already unrolled or vectorized
        elif choice == "unroll":
            stage.unroll(leaf[-1])
        elif leaf[-1].iter_type != "reduce":
            stage.vectorize(leaf[-1])
