"""PodsByPriority.build lays out many rows at once as each row's pods ranked one by one would:
higher priority first, then earlier start, then placement order; each slot's requests and the
sums from each slot on."""
import random
from types import SimpleNamespace

import numpy as np
import pytest

from kschedcore.backend.cache.pods_by_priority import _EMPTY, PodsByPriority


def _placement(key, priority, cols, vals):
    return SimpleNamespace(pod=SimpleNamespace(key=key, priority=priority),
                           cols=np.asarray(cols, np.int64), vals=np.asarray(vals, np.int64))


@pytest.mark.parametrize("seed", range(30))
def test_rows_built_at_once_as_ranked_one_by_one(seed):
    rng = random.Random(seed)
    n_rows, n_res = rng.randint(1, 12), rng.randint(1, 4)
    st = PodsByPriority((n_rows, n_res), slots=rng.randint(1, 3))
    starts = {}
    for build in range(3):              # rebuilt rows replace what they held
        rows = rng.sample(range(n_rows), rng.randint(1, n_rows))
        placements = []
        for row in rows:
            pls = []
            for j in range(rng.randint(0, 7)):
                key = f"{build}/{row}/{j}"
                starts[key] = rng.choice([1, 2, 3, 2 ** 62])
                cols = rng.sample(range(n_res), rng.randint(0, n_res))
                pls.append(_placement(key, rng.choice([0, 0, 5, 10]), cols, [rng.randint(1, 99) for _ in cols]))
            placements.append(pls)
        st.build(rows, placements, starts.get)
        for row, pls in zip(rows, placements):
            ranked = sorted(pls, key=lambda pl: (-pl.pod.priority, starts[pl.pod.key]))    # stable
            n = len(ranked)
            assert st.count[row] == n and st.changed[row] == _EMPTY
            assert [p.key for p in st.pods[row]] == [pl.pod.key for pl in ranked]
            assert st.prio[:n, row].tolist() == [pl.pod.priority for pl in ranked]
            assert (st.prio[n:, row] == _EMPTY).all()
            use = np.zeros((n_res, st.slots), np.int64)
            for s, pl in enumerate(ranked):
                use[pl.cols, s] += pl.vals
            assert (st.use[:, row] == use).all()
            for s in range(st.slots + 1):
                assert (st.after[:, row, s] == use[:, s:].sum(axis=1)).all()
