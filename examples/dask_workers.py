"""A compiled function mapped over the blocks of a Dask array on a local cluster of two
worker processes. Each worker compiles the function once and loads the kernels this
process built from the shared on-disk cache (kiln.config.cache_dir / KILN_CACHE_DIR):
no C++ compiler runs in the workers.

    python examples/dask_workers.py
"""
import numpy as np

import kiln
from kiln.runtime import build


@kiln.compile                       # module level: workers unpickle it by name
def normalise(block):
    centred = block - block.mean(axis=1, keepdims=True)
    return np.tanh(centred * 2.0)


def g_plus_plus_runs():
    return build.stats["builds"]     # C++ builds this process ran


def main():
    import dask.array as da
    from distributed import Client, LocalCluster

    x = da.random.default_rng(0).standard_normal((64 * 256, 64), chunks=(256, 64))
    normalise(x.blocks[0].compute())     # build the kernels here, once
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        # meta= tells Dask the output type; without it Dask calls normalise on an empty
        # block here first (kiln would compile that 0-size case too).
        y = x.map_blocks(normalise, meta=np.empty((0, 0))).compute()
        runs = client.run(g_plus_plus_runs)
    xs = x.compute()
    centred = xs - xs.mean(axis=1, keepdims=True)
    assert np.allclose(y, np.tanh(centred * 2.0))
    print(f"64 blocks on 2 workers: g++ runs per worker {sorted(runs.values())}, "
          f"here {g_plus_plus_runs()}")


if __name__ == "__main__":
    main()
