"""Compiled functions in worker processes: a real Dask LocalCluster of processes
(``dask.array.map_blocks`` and ``client.submit``) and a ``concurrent.futures`` process
pool. Each worker compiles the function once at most and takes the kernels from the
shared on-disk cache: ``kiln.runtime.build.stats["builds"]`` (g++ runs in that process)
stays 0 there when the cache has them. Results are NumPy's."""
import concurrent.futures
import multiprocessing
import os

import numpy as np
import pytest

import kiln
from kiln.config import config
from kiln.runtime import build

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402


@kiln.compile
def scale_shift(block):
    return np.tanh(block * 1.5 + 0.25).sum(axis=1)


def eager(block):
    return np.tanh(block * 1.5 + 0.25).sum(axis=1)


def _run_and_count(block):
    """In a worker: the compiled result, this process's g++ runs and captured graphs."""
    return scale_shift(block), build.stats["builds"], len(scale_shift.records)


def _worker_counts():
    return build.stats["builds"], len(scale_shift.records)


def _blocks(n, shape=(16, 8)):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape) for _ in range(n)]


def _use_cache(path):
    """In a worker (and here): compile into ``path``, forget what was compiled in memory,
    count g++ runs from zero."""
    kiln.reset()
    config.cache_dir = path
    build.stats["builds"] = 0


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as lc, \
            distributed.Client(lc) as c:
        yield c


@pytest.fixture
def shared_cache(tmp_path, monkeypatch):
    """A fresh cache directory for this process and the workers it starts."""
    cache = str(tmp_path / "cache")
    monkeypatch.setenv("KILN_CACHE_DIR", cache)      # process pools started from here
    monkeypatch.setattr(config, "cache_dir", cache)
    kiln.reset()                     # nothing compiled in memory from another test
    return cache


@pytest.fixture
def cluster(client, shared_cache):
    client.run(_use_cache, shared_cache)
    return client


def kernels_built_here(fn, *args) -> int:
    """g++ runs in this process while ``fn(*args)`` runs."""
    before = build.stats["builds"]
    fn(*args)
    return build.stats["builds"] - before


def test_dask_workers_reuse_the_disk_cache(cluster):
    client = cluster
    blocks = _blocks(64)
    kernels = kernels_built_here(scale_shift, blocks[0])   # this process fills the cache
    assert kernels >= 1
    x = da.concatenate([da.from_array(b, chunks=b.shape) for b in blocks], axis=0)
    got = x.map_blocks(scale_shift, drop_axis=1, dtype=np.float64).compute()
    np.testing.assert_allclose(got, np.concatenate([eager(b) for b in blocks]), rtol=1e-12)
    futures = [client.submit(_run_and_count, b, pure=False) for b in blocks[:8]]
    for b, (value, _, _) in zip(blocks, client.gather(futures)):
        np.testing.assert_allclose(value, eager(b), rtol=1e-12)
    per_worker = client.run(_worker_counts)
    assert len(per_worker) == 2
    for builds, graphs in per_worker.values():
        assert builds == 0          # no g++ in a worker: the cache had every kernel
        assert graphs <= 1          # captured once per worker, not per task


def test_dask_cold_cache_builds_each_kernel_once_in_total(cluster, tmp_path):
    # Nothing in the cache: the workers share the builds (a file lock per kernel), so g++
    # runs once per distinct kernel in total, however the 64 blocks are spread.
    blocks = _blocks(64)
    here = build.stats["builds"]
    x = da.concatenate([da.from_array(b, chunks=b.shape, meta=b[:0, :0]) for b in blocks], axis=0)
    got = x.map_blocks(scale_shift, drop_axis=1, meta=np.empty(0)).compute()
    np.testing.assert_allclose(got, np.concatenate([eager(b) for b in blocks]), rtol=1e-12)
    total = sum(builds for builds, _ in cluster.run(_worker_counts).values())
    assert build.stats["builds"] == here       # nothing compiled in this process
    # The same kernels once more in this process, from a fresh cache: how many there are.
    config.cache_dir = str(tmp_path / "count")
    assert total == kernels_built_here(kiln.compile(eager), blocks[0]) >= 1


def test_process_pool_workers_share_the_cache(shared_cache):
    blocks = _blocks(8)
    assert kernels_built_here(scale_shift, blocks[0]) >= 1
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        results = list(pool.map(_run_and_count, blocks))
    for b, (value, builds, graphs) in zip(blocks, results):
        np.testing.assert_allclose(value, eager(b), rtol=1e-12)
        assert builds == 0 and graphs == 1
    assert os.path.isdir(os.path.join(shared_cache, "kernels"))
