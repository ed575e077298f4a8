"""``python -m benchmarks.npbench [--only a,b] [--rounds N]``: NumPy kernels written as
npbench's NumPy versions are (https://github.com/spcl/npbench, BSD-3; re-typed here at small
sizes), each called once under ``kiln.compile`` in a fresh cache directory (first call:
capture, lowering and g++) and then timed against plain NumPy in alternating rounds
(medians). Every result and every argument the kernel writes is compared with NumPy's
(float32 within 1e-6, float64 within 1e-9: kernels' exp/log are within an ulp of glibc's).

It found this stop's compile-time and threading problems (docs/lowering.md): floyd_warshall's
200 steps building 200 kernels that differed in offsets only, azimint_naive's bins fusing
into a square-sized stage (84 s first call), and two-thread kernels on a loaded machine.
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import tempfile
import time

import numpy as np


# ---- the kernels (npbench names and argument orders)


def lu(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def seidel_2d(TSTEPS, N, A):
    for t in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:] +
                           A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def jacobi_1d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def fdtd_2d(TMAX, ex, ey, hz, _fict_):
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def nussinov(N, seq):
    def match(b1, b2):
        if b1 + b2 == 3:
            return 1
        else:
            return 0
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def arc_distance(theta_1, phi_1, theta_2, phi_2):
    temp = np.sin((theta_2 - theta_1) / 2)**2 + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2)**2
    distance_matrix = 2 * (np.arctan2(np.sqrt(temp), np.sqrt(1 - temp)))
    return distance_matrix


def azimint_naive(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


def mandelbrot1(xmin, xmax, ymin, ymax, xn, yn, maxiter, horizon=2.0):
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)
    C = X + Y[:, None] * 1j
    N = np.zeros(C.shape, dtype=np.int64)
    Z = np.zeros(C.shape, dtype=np.complex128)
    for n in range(maxiter):
        I = np.less(abs(Z), horizon)
        N[I] = n
        Z[I] = Z[I]**2 + C[I]
    N[N == maxiter - 1] = 0
    return Z, N


def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum


def hdiff(in_field, out_field, coeff):
    I, J, K = out_field.shape[0], out_field.shape[1], out_field.shape[2]
    lap_field = 4.0 * in_field[1:I + 3, 1:J + 3, :] - (
        in_field[2:I + 4, 1:J + 3, :] + in_field[0:I + 2, 1:J + 3, :] +
        in_field[1:I + 3, 2:J + 4, :] + in_field[1:I + 3, 0:J + 2, :])
    res = lap_field[1:, 1:J + 1, :] - lap_field[:-1, 1:J + 1, :]
    flx_field = np.where((res * (in_field[2:I + 3, 2:J + 2, :] - in_field[1:I + 2, 2:J + 2, :])) > 0, 0, res)
    res = lap_field[1:I + 1, 1:, :] - lap_field[1:I + 1, :-1, :]
    fly_field = np.where((res * (in_field[2:I + 2, 2:J + 3, :] - in_field[2:I + 2, 1:J + 2, :])) > 0, 0, res)
    out_field[:, :, :] = in_field[2:I + 2, 2:J + 2, :] - coeff[:, :, :] * (
        flx_field[1:, :, :] - flx_field[:-1, :, :] + fly_field[:, 1:, :] - fly_field[:, :-1, :])


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def deriche(alpha, imgIn):
    k = (1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha)) / (1.0 + alpha * np.exp(-alpha) - np.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0**(-alpha)
    b2 = -np.exp(-2.0 * alpha)
    c1 = c2 = 1
    y1 = np.empty_like(imgIn)
    y1[:, 0] = a1 * imgIn[:, 0]
    y1[:, 1] = a1 * imgIn[:, 1] + a2 * imgIn[:, 0] + b1 * y1[:, 0]
    for j in range(2, imgIn.shape[1]):
        y1[:, j] = (a1 * imgIn[:, j] + a2 * imgIn[:, j - 1] + b1 * y1[:, j - 1] + b2 * y1[:, j - 2])
    y2 = np.empty_like(imgIn)
    y2[:, -1] = 0.0
    y2[:, -2] = a3 * imgIn[:, -1]
    for j in range(imgIn.shape[1] - 3, -1, -1):
        y2[:, j] = (a3 * imgIn[:, j + 1] + a4 * imgIn[:, j + 2] + b1 * y2[:, j + 1] + b2 * y2[:, j + 2])
    imgOut = c1 * (y1 + y2)
    return imgOut


def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def spd(rng: np.random.Generator, n: int) -> np.ndarray:
    """A symmetric positive definite n x n matrix (lu, cholesky, trisolv)."""
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


def csr(rng: np.random.Generator, n: int, nnz: int) -> tuple:
    """spmv's arguments: an n x n CSR matrix of nnz entries and a vector."""
    rows = np.sort(rng.integers(0, nnz, n - 1))
    return (np.concatenate([[0], rows, [nnz]]).astype(np.int64),
            rng.integers(0, n, nnz).astype(np.int64), rng.random(nnz), rng.random(n))


def _cases(rng: np.random.Generator) -> dict:
    from benchmarks.npbench_more import cases as more_cases   # (kernels of their own file)
    n = 60
    return {
        "lu": (lu, (spd(rng, n),)),
        "cholesky": (cholesky, (spd(rng, n),)),
        "gramschmidt": (gramschmidt, (rng.random((n, n - 10)),)),
        "durbin": (durbin, (rng.random(2 * n) * 0.1,)),
        "trisolv": (trisolv, (np.tril(spd(rng, n)), np.zeros(n), rng.random(n))),
        "seidel_2d": (seidel_2d, (4, 30, rng.random((30, 30)))),
        "jacobi_1d": (jacobi_1d, (50, rng.random(400), rng.random(400))),
        "fdtd_2d": (fdtd_2d, (20, *[rng.random((50, 60)) for _ in range(3)], rng.random(20))),
        "nussinov": (nussinov, (40, rng.integers(0, 4, 40).astype(np.int32))),
        "floyd_warshall": (floyd_warshall, (rng.integers(1, 100, (200, 200)).astype(np.int32),)),
        "go_fast": (go_fast, (rng.random((200, 200)),)),
        "arc_distance": (arc_distance, tuple(rng.random(100_000) for _ in range(4))),
        "azimint_naive": (azimint_naive, (rng.random(40_000), rng.random(40_000), 100)),
        "mandelbrot1": (mandelbrot1, (-2.25, 0.75, -1.25, 1.25, 100, 100, 30)),
        "crc16": (crc16, (rng.integers(0, 256, 1000, dtype=np.uint8),)),
        "spmv": (spmv, csr(rng, 300, 3000)),
        "softmax": (softmax, (rng.random((16, 64, 128)).astype(np.float32),)),
        "hdiff": (hdiff, (rng.random((68, 68, 20)), np.zeros((64, 64, 20)), rng.random((64, 64, 20)))),
        "gemver": (gemver, (1.5, 1.2, rng.random((200, 200)), *[rng.random(200) for _ in range(8)])),
        "deriche": (deriche, (0.25, rng.random((64, 80)))),
        **more_cases(rng, spd, scale=8),
    }


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        tol = 1e-6 if a.dtype == np.float32 else 1e-9
        return a.dtype == b.dtype and a.shape == b.shape and \
            np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    return type(a) is type(b) and (a == b or bool(np.isclose(a, b)))


def measure(name: str, fn, args: tuple, rounds: int) -> dict:
    import kiln
    compiled = kiln.compile(fn)
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*want)
    start = time.perf_counter()
    result = compiled(*got)
    first = time.perf_counter() - start
    ok = _same(expected, result) and all(_same(w, g) for w, g in zip(want, got))
    times: dict[str, list] = {"numpy": [], "kiln": []}
    for _ in range(rounds):
        for system, f in (("numpy", fn), ("kiln", compiled)):
            fresh = copy.deepcopy(args)
            start = time.perf_counter()
            f(*fresh)
            times[system].append(time.perf_counter() - start)
    numpy_ms, kiln_ms = (statistics.median(times[s]) * 1e3 for s in ("numpy", "kiln"))
    return dict(name=name, ok=ok, first_s=first, numpy_ms=numpy_ms, kiln_ms=kiln_ms,
                ratio=numpy_ms / kiln_ms)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    only = [n for n in args.only.split(",") if n]
    os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-npbench-"))
    cases = _cases(np.random.default_rng(0))
    print(f"{'kernel':16s} {'ok':>3s} {'first s':>8s} {'NumPy ms':>9s} {'kiln ms':>9s} {'x NumPy':>8s}")
    for name, (fn, fargs) in cases.items():
        if only and name not in only:
            continue
        r = measure(name, fn, fargs, args.rounds)
        print(f"{name:16s} {'yes' if r['ok'] else 'NO':>3s} {r['first_s']:8.2f} {r['numpy_ms']:9.3f} "
              f"{r['kiln_ms']:9.3f} {r['ratio']:8.2f}", flush=True)


if __name__ == "__main__":
    main()
