"""Loop kernels NumPy runs as Python loops (issue #13): benchmarks/loops.py times them,
tests/capture/test_loops.py checks every form against plain Python at small sizes."""
import numpy as np


def fsub(L, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


def gauss_seidel(u, f, sweeps):
    n, m = u.shape
    for _ in range(sweeps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - f[i, j])
    return u


def edit_distance(a, b):
    n, m = a.shape[0], b.shape[0]
    d = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    return d[n, m]


def levenshtein_rows(a, b):
    """Edit distance over two rows swapped each step (kiln/capture/loop_swaps.py)."""
    n, m = a.shape[0], b.shape[0]
    prev = np.arange(m + 1)
    cur = np.zeros(m + 1, dtype=np.int64)
    for i in range(1, n + 1):
        cur[0] = i
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev, cur = cur, prev
    return prev[m]


def house_robber(v):
    n = v.shape[0]
    dp = np.zeros(n + 2, dtype=v.dtype)
    for i in range(n):
        dp[i + 2] = max(dp[i + 1], dp[i] + v[i])
    return dp[n + 1]


def crc32(data):
    c = np.uint32(0xFFFFFFFF)
    for k in range(data.shape[0]):
        c = c ^ np.uint32(data[k])
        for _ in range(8):
            c = (c >> np.uint32(1)) ^ (np.uint32(0xEDB88320) & (np.uint32(0) - (c & np.uint32(1))))
    return c ^ np.uint32(0xFFFFFFFF)


def lu_inplace(A):
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] = A[i, k] / A[k, k]
            for j in range(k + 1, n):
                A[i, j] -= A[i, k] * A[k, j]
    return A


def cholesky(A):
    n = A.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    return L


def relax_until_converged(u, tol):
    """A time loop with a convergence test: Jacobi-like sweeps of a 1-D rod until the
    largest change is below ``tol``; returns the number of sweeps (``u`` is updated)."""
    n = u.shape[0]
    err = tol + 1.0
    steps = 0
    while err > tol:
        err = 0.0
        for i in range(1, n - 1):
            new = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1])
            err = max(err, float(abs(new - u[i])))
            u[i] = new
        steps += 1
    return steps


def jacobi_sweeps(u, tol):
    """The same rod as NumPy users write it: whole-slice Jacobi sweeps (each reads the
    previous sweep) until the largest change, ``np.abs(...).max()``, is below ``tol``."""
    err = tol + 1.0
    steps = 0
    while err > tol:
        new = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
        err = float(np.abs(new - u[1:-1]).max())
        u[1:-1] = new
        steps += 1
    return steps


# weighted_column_distance: benchmarks/idioms.py's (column against column, nested loops)


# Row loops over growing slices: array work of run-time length inside the loop body
# (kiln/capture/loop_vectors.py), what NumPy users write instead of the element loops above.

def tri_solve(L, b):
    """Forward substitution, one dot of a growing row per step."""
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def lu_rows(A):
    """LU without pivoting, in place: a row update per (k, i)."""
    n = A.shape[0]
    for k in range(n):
        for i in range(k + 1, n):
            A[i, k] /= A[k, k]
            A[i, k + 1:] -= A[i, k] * A[k, k + 1:]
    return A


def cholesky_rows(A):
    """Cholesky–Banachiewicz with dots of row prefixes."""
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        L[j, j] = np.sqrt(A[j, j] - L[j, :j] @ L[j, :j])
        for i in range(j + 1, n):
            L[i, j] = (A[i, j] - np.dot(L[i, :j], L[j, :j])) / L[j, j]
    return L


# Loops whose bounds or steps are run-time values of the body: a range bound read from
# the data (CSR row pointers), a step that is the outer loop's variable (the sieve).

def csr_matvec(indptr, indices, data, x):
    """y = A @ x for A in CSR form: the inner loop's bounds are elements of ``indptr``."""
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


def sieve(n):
    """Sieve of Eratosthenes as element loops: a data-dependent branch around an inner
    loop whose step is the outer variable."""
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[0] = False
    is_prime[1] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_prime[i]:
            for j in range(i * i, n + 1, i):
                is_prime[j] = False
    return is_prime


def first_above(x, t):
    """Linear search returning from inside the loop: the first index above ``t``, -1 if none."""
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


def smith_waterman(a, b, match, mismatch, gap):
    """Local alignment score and where it ends (tests/test_programs_loop_idioms.py)."""
    n, m = a.shape[0], b.shape[0]
    H = np.zeros((n + 1, m + 1))
    best = 0.0
    bi = 0
    bj = 0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            s = match if a[i - 1] == b[j - 1] else mismatch
            h = max(0.0, H[i - 1, j - 1] + s, H[i - 1, j] - gap, H[i, j - 1] - gap)
            H[i, j] = h
            if h > best:
                best = h
                bi = i
                bj = j
    return best, bi, bj


def insertion_sort(a):
    """In place; the inner ``while j >= 0 and a[j] > key`` is a nest of two while loops."""
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


# What numba users write (stop 57): graph, automaton, binning, decoding and particle loops.

def floyd_warshall(D):
    """All-pairs shortest paths in place: the triple loop over a distance matrix."""
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            dik = D[i, k]
            for j in range(n):
                if dik + D[k, j] < D[i, j]:
                    D[i, j] = dik + D[k, j]
    return D


def rule30(cells, steps):
    """A 1-D cellular automaton (Wolfram's rule 30) on a ring: each step reads the left
    neighbour ``cur[i - 1]`` (``cur[-1]`` at ``i = 0``) and writes a second row, then the
    rows swap."""
    n = cells.shape[0]
    cur = cells.copy()
    nxt = np.zeros_like(cur)
    for _ in range(steps):
        for i in range(n):
            nxt[i] = cur[i - 1] ^ (cur[i] | cur[(i + 1) % n])
        cur, nxt = nxt, cur
    return cur


def histogram_loop(x, nbins):
    """Counts of values in [0, 1) per bin, the bin ``int(x * nbins)``."""
    counts = np.zeros(nbins, dtype=np.int64)
    for i in range(x.shape[0]):
        b = int(x[i] * nbins)
        if b >= 0 and b < nbins:
            counts[b] += 1
    return counts


def viterbi(log_a, log_b, log_pi, obs):
    """The most likely hidden-state path of an HMM: a max and its argmax per state and
    step, then the backtrack."""
    T = obs.shape[0]
    S = log_pi.shape[0]
    delta = np.zeros((T, S))
    psi = np.zeros((T, S), dtype=np.int64)
    for s in range(S):
        delta[0, s] = log_pi[s] + log_b[s, obs[0]]
    for t in range(1, T):
        for s in range(S):
            best = delta[t - 1, 0] + log_a[0, s]
            arg = 0
            for r in range(1, S):
                v = delta[t - 1, r] + log_a[r, s]
                if v > best:
                    best = v
                    arg = r
            delta[t, s] = best + log_b[s, obs[t]]
            psi[t, s] = arg
    path = np.zeros(T, dtype=np.int64)
    best = delta[T - 1, 0]
    for s in range(1, S):
        if delta[T - 1, s] > best:
            best = delta[T - 1, s]
            path[T - 1] = s
    for t in range(T - 2, -1, -1):
        path[t] = psi[t + 1, path[t + 1]]
    return path


def pic_deposit(pos, q, ngrid):
    """Particle-in-cell charge deposit: linear (cloud-in-cell) weights on a periodic grid
    of unit spacing."""
    rho = np.zeros(ngrid)
    for p in range(pos.shape[0]):
        x = pos[p]
        j = int(x)
        w = x - j
        rho[j % ngrid] += q[p] * (1.0 - w)
        rho[(j + 1) % ngrid] += q[p] * w
    return rho
