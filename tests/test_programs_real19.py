"""A nineteenth set of real NumPy programs through kiln.compile: well-known public NumPy
material as users paste it, reproduced from memory in its own style (globals, in-place
ops, fancy indexing, np.newaxis, chained methods): "100 NumPy exercises"
(rougier/numpy-100: nearest value, moving average by cumsum, matrix rank by SVD, sliding
windows, unique rows, bincount-weighted sums, n largest by argpartition,
cartesian product, rows with unequal values, integers to a binary matrix, np.add.reduceat
means, row swaps, a Cauchy matrix, sums over the last two axes), numpy.org tutorials
(an MNIST-like MLP step with relu, one-hot and cross-entropy backprop, Moore's law by
np.polyfit and lstsq, X-ray-style gradients and a Sobel filter by slicing, Pong's
discount_rewards and frame preprocessing, an LSTM cell step, FFT denoising), the Python
Data Science Handbook (centering by broadcasting, k-nearest neighbours by argpartition, a
histogram by hand with searchsorted and np.add.at), Rougier's "From Python to NumPy"
(random walk, Mandelbrot escape counts, maze distances by Bellman-Ford diffusion, a smoke
solver's diffusion and advection, Collatz steps) and scipy-lectures (data statistics,
population dynamics, Markov chain stationary distribution). Structured dtypes are not
claimed by kiln (docs/coverage.md), so the record-array examples were left out; the Game of
Life is real13's game_of_life_by_slicing. Mandelbrot keeps Rougier's float32/complex64
(npbench's is float64). Every program ran against NumPy on cpp, cpp-dynamic, eager and
aot_eager with the cost model on and off. Fixed: ``A.flat[::n + 1] += alpha`` (and
``Z.flat[k]``) on an array of more than 4096 elements broke the graph five times, since
``A.flat`` enumerated its steps when made (test_programs_real7.py). numpy-100 #61's
``Z.flat[np.abs(Z - z).argmin()]`` broke at the run-time index (NumPy's out-of-bounds
message for flat differs from indexing's); since stop 57 it is one ``flat_item`` read.
Left: a fused argmin/argmax runs one in-order
scalar chain: 1.7x NumPy's SIMD argmin on 200,000 float64 in warm memory.
"""
from __future__ import annotations

import numpy as np

from tests.test_programs import program_registry, program_test

f32, f64, i32, i64, u8 = np.float32, np.float64, np.int32, np.int64, np.uint8

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)

_g = np.random.default_rng(1919)


# ----------------------------------------------------------------------------- numpy-100

@program((_g.uniform(0, 1, 20), 0.5), (np.arange(7.0), 3.3), (_g.uniform(0, 1, 9).astype(f32), 0.1))
def nearest_value(Z, z):
    # #61: find the nearest value from a given value in an array
    m = Z.flat[np.abs(Z - z).argmin()]
    return m, np.abs(Z - z).argmin()


@program((np.arange(20), 3), (_g.standard_normal(15), 4), (np.arange(10, dtype=f32), 1))
def moving_average(a, n=3):
    # #75: moving average using a sliding window by cumsum
    ret = np.cumsum(a, dtype=float)
    ret[n:] = ret[n:] - ret[:-n]
    return ret[n - 1:] / n


@program((_g.uniform(0, 1, (10, 10)),), (np.outer(np.arange(1.0, 6), np.arange(1.0, 4)),))
def matrix_rank(Z):
    # #83: compute a matrix rank
    U, S, V = np.linalg.svd(Z)    # Singular Value Decomposition
    rank = np.sum(S > 1e-10)
    return rank


@program((np.arange(10), 3), (_g.standard_normal(12), 5))
def sliding_windows(Z, w):
    # #76-like: a two-dimensional array of rolling windows, then their means and maxima
    Zw = np.lib.stride_tricks.sliding_window_view(Z, window_shape=w)
    return Zw.copy(), Zw.mean(axis=-1), Zw.max(axis=-1)


@program((_g.integers(0, 2, (6, 3)),), (np.array([[1, 2], [1, 2], [3, 4], [1, 2]]),))
def unique_rows(Z):
    # #87: extract unique rows, both the void-view trick and np.unique(axis=0)
    uZ = np.unique(Z, axis=0)
    T = np.ascontiguousarray(Z).view(np.dtype((np.void, Z.dtype.itemsize * Z.shape[1])))
    _, idx = np.unique(T, return_index=True)
    return uZ, Z[np.sort(idx)]


@program((np.array([1, 2, 3, 4, 5, 6]), np.array([1, 3, 9, 3, 4, 1])),
         (_g.uniform(0, 1, 30), _g.integers(0, 10, 30)))
def bincount_weighted(X, I):
    # #65: accumulate elements of a vector X to an array F based on an index list I
    F = np.bincount(I, X)
    G = np.zeros(I.max() + 1)
    np.add.at(G, I, X)
    return F, G


@program((_g.permutation(100).astype(f64), 5), (_g.standard_normal(40), 3))
def n_largest(Z, n):
    # #89: the n largest values of an array, by argsort and by argpartition
    a = Z[np.argsort(Z)[-n:]]
    b = Z[np.argpartition(-Z, n)[:n]]
    return a, np.sort(b)


@program(((1, 2, 3), (4, 5), (6, 7)), ([1.5, 2.5], [3, 4, 5]))
def cartesian(*arrays):
    # #91: cartesian product of arrays, the indices trick
    arrays = [np.asarray(a) for a in arrays]
    shape = (len(x) for x in arrays)
    ix = np.indices(shape, dtype=int)
    ix = ix.reshape(len(arrays), -1).T
    for n, arr in enumerate(arrays):
        ix[:, n] = arrays[n][ix[:, n]]
    return ix


@program((_g.integers(0, 3, (10, 3)),), (np.array([[1.0, 1.0], [2.0, 3.0], [4.0, 4.0]]),))
def rows_unequal(Z):
    # #94: extract rows with unequal values, both ways
    E = np.all(Z[:, 1:] == Z[:, :-1], axis=1)
    U = Z[~E]
    V = Z[Z.max(axis=1) != Z.min(axis=1), :]
    return U, V


@program((np.array([0, 1, 2, 3, 15, 16, 32, 64, 128]),), (np.array([0, 1, 2, 3, 15, 16, 32, 64, 128], u8),))
def int_to_binary_matrix(I):
    # #95: convert a vector of ints into a matrix binary representation
    B = ((I.reshape(-1, 1) & (2 ** np.arange(8))) != 0).astype(int)
    C = np.unpackbits(I[:, np.newaxis].astype(np.uint8), axis=1)
    return B[:, ::-1], C


@program((_g.uniform(0, 1, 100), _g.integers(0, 10, 100)), (np.arange(12.0), np.array([0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3])))
def subarray_means(D, S):
    # #69: means of subsets of D by the subset indices S, bincount and a sorted reduceat
    D_sums = np.bincount(S, weights=D)
    D_counts = np.bincount(S)
    order = np.argsort(S, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(S[order])) + 1]
    R = np.add.reduceat(D[order], starts)
    return D_sums / D_counts, R / np.diff(np.r_[starts, S.size])


@program((np.arange(25).reshape(5, 5),), (_g.standard_normal((3, 4)),))
def swap_rows_and_cauchy(A):
    # #64 and #47: swap two rows in place; a Cauchy matrix C_ij = 1/(x_i - y_j)
    A[[0, 1]] = A[[1, 0]]
    X = np.arange(8)
    Y = X + 0.5
    C = 1.0 / np.subtract.outer(X, Y)
    return A, np.linalg.det(C)


@program((_g.integers(0, 10, (3, 4, 3, 4)),), (_g.standard_normal((2, 2, 3, 5)),))
def sum_last_two_axes(A):
    # #67: considering a 4D array, get the sum over the last two axes at once
    s1 = A.sum(axis=(-2, -1))
    s2 = A.reshape(A.shape[:-2] + (-1,)).sum(axis=-1)
    return s1, s2


# ----------------------------------------------------------------------------- numpy.org tutorials

def relu(x):
    return (x >= 0) * x


def relu2deriv(output):
    return output >= 0


@program((_g.uniform(0, 1, (8, 16)).astype(f32), np.array([3, 1, 0, 9, 4, 4, 2, 7]),
          _g.uniform(-0.1, 0.1, (16, 12)), _g.uniform(-0.1, 0.1, (12, 10)), 0.005, 2),)
def mnist_mlp_steps(x, labels, weights_1, weights_2, learning_rate, epochs):
    # numpy.org "deep learning on MNIST": one-hot labels, relu, dropout-free backprop
    y = np.zeros((labels.size, 10))
    y[np.arange(labels.size), labels] = 1
    losses = []
    for j in range(epochs):
        training_loss = 0.0
        training_accurate_predictions = 0
        for i in range(len(x)):
            layer_0 = x[i]
            layer_1 = np.dot(layer_0, weights_1)
            layer_1 = relu(layer_1)
            layer_2 = np.dot(layer_1, weights_2)
            training_loss += np.sum((y[i] - layer_2) ** 2)
            training_accurate_predictions += int(np.argmax(layer_2) == np.argmax(y[i]))
            layer_2_delta = y[i] - layer_2
            layer_1_delta = np.dot(weights_2, layer_2_delta) * relu2deriv(layer_1)
            weights_1 += learning_rate * np.outer(layer_0, layer_1_delta)
            weights_2 += learning_rate * np.outer(layer_1, layer_2_delta)
        losses.append(training_loss / len(x))
    return losses, training_accurate_predictions


@program((np.array([1971, 1972, 1974, 1978, 1982, 1985, 1989, 1993, 1997, 2000, 2005, 2010]),
          np.array([2300, 3500, 6000, 29000, 134000, 275000, 1200000, 3100000, 7500000, 42000000,
                    169000000, 1170000000], f64)),)
def moores_law(year, transistor_count):
    # numpy.org "determining Moore's law": fit log(count) = A*year + B two ways
    yi = np.log(transistor_count)
    A_M, B_M = np.polyfit(year, yi, 1)
    Z = year[:, np.newaxis] ** [1, 0]
    AB, residuals, rank, sv = np.linalg.lstsq(Z, yi, rcond=None)
    doubling = np.log(2) / AB[0]
    pred = np.exp(B_M) * np.exp(A_M * np.array([2017, 2020]))
    return A_M, B_M, AB, doubling, pred


@program((_g.uniform(0, 255, (24, 20)).astype(u8),), (np.tile(np.arange(16, dtype=u8) * 16, (10, 1)),))
def xray_edges(xray_image):
    # numpy.org "X-ray image processing": gradients, a Sobel filter by slicing, a mask
    img = xray_image.astype(np.float64)
    gy, gx = np.gradient(img)
    sx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2])
    sy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:])
    sobel = np.hypot(sx, sy)
    sobel *= 255.0 / np.max(sobel)
    mask = np.where(xray_image > np.percentile(xray_image, 90), 255, 0)
    return np.hypot(gx, gy), sobel, mask


@program((np.array([0.0, 0, 0, 1, 0, 0, -1, 0, 0, 0]), 0.99), (np.zeros(5), 0.9))
def discount_rewards(r, gamma):
    # numpy.org "Pong from pixels": discounted rewards, reset at each game boundary
    discounted_r = np.zeros_like(r)
    running_add = 0
    for t in reversed(range(0, r.size)):
        if r[t] != 0:
            running_add = 0
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    discounted_r -= np.mean(discounted_r)
    std = np.std(discounted_r)
    if std > 0:
        discounted_r /= std
    return discounted_r


@program((_g.choice([0, 144, 109, 17, 236], size=(210, 160, 3)).astype(u8),),)
def pong_preprocess(I):
    # numpy.org "Pong from pixels": crop, downsample by 2, erase background, binarise
    I = I[35:195]
    I = I[::2, ::2, 0]
    I[I == 144] = 0
    I[I == 109] = 0
    I[I != 0] = 1
    return I.astype(np.float64).ravel()


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@program((_g.standard_normal((5, 4)), np.zeros(6), np.zeros(6), _g.standard_normal((24, 10)) * 0.1, np.zeros(24)),)
def lstm_steps(xs, h, c, W, b):
    # numpy.org "sentiment analysis": an LSTM cell run over a sequence, gates stacked
    hidden = h.size
    hs = []
    for x in xs:
        concat = np.concatenate((h, x))
        z = W @ concat + b
        f = _sigmoid(z[:hidden])
        i = _sigmoid(z[hidden:2 * hidden])
        cbar = np.tanh(z[2 * hidden:3 * hidden])
        o = _sigmoid(z[3 * hidden:])
        c = f * c + i * cbar
        h = o * np.tanh(c)
        hs.append(h)
    return np.array(hs), c


@program((np.sin(2 * np.pi * 50 * np.arange(256) / 1000) + 0.5 * _g.standard_normal(256), 1000.0, 100.0),)
def fft_denoise(f, fs, threshold):
    # tutorial-style FFT denoising: zero the weak frequencies, invert
    n = len(f)
    fhat = np.fft.fft(f, n)
    PSD = fhat * np.conj(fhat) / n
    freq = (1 / (n / fs)) * np.arange(n)
    indices = PSD > threshold
    fhat = indices * fhat
    ffilt = np.fft.ifft(fhat)
    return PSD.real, freq[indices], ffilt.real


# ----------------------------------------------------------------------------- Data Science Handbook

@program((_g.random((10, 3)),), (_g.random((4, 5)).astype(f32),))
def centering(X):
    Xmean = X.mean(0)
    X_centered = X - Xmean
    return X_centered, X_centered.mean(0)


@program((_g.random((10, 2)), 2), (_g.random((7, 3)), 3))
def k_nearest_neighbors(X, K):
    dist_sq = np.sum((X[:, np.newaxis, :] - X[np.newaxis, :, :]) ** 2, axis=-1)
    nearest = np.argsort(dist_sq, axis=1)
    nearest_partition = np.argpartition(dist_sq, K + 1, axis=1)
    near = np.sort(nearest_partition[:, :K + 1], axis=1)
    return dist_sq, nearest[:, 1:K + 1], near


@program((_g.standard_normal(100),), (np.array([-5.0, 0.0, 0.1, 5.0]),))
def histogram_by_hand(x):
    bins = np.linspace(-5, 5, 20)
    counts = np.zeros_like(bins)
    i = np.searchsorted(bins, x)
    np.add.at(counts, i, 1)
    h, _ = np.histogram(x, bins)
    return counts, h


# ----------------------------------------------------------------------------- From Python to NumPy

@program((_g.integers(0, 2, 50),), (np.ones(8, i64),))
def random_walk(steps01):
    steps = 2 * steps01 - 1
    walk = np.cumsum(steps)
    return walk, walk.max(), np.argmax(walk == walk.max())


@program((-2.0, 0.5, -1.25, 1.25, 24, 16, 20, 2.0),)
def mandelbrot_counts(xmin, xmax, ymin, ymax, xn, yn, maxiter, horizon=2.0):
    X = np.linspace(xmin, xmax, xn, dtype=np.float32)
    Y = np.linspace(ymin, ymax, yn, dtype=np.float32)
    C = X + Y[:, None] * 1j
    N = np.zeros(C.shape, dtype=int)
    Z = np.zeros(C.shape, np.complex64)
    for n in range(maxiter):
        I = np.less(abs(Z), horizon)
        N[I] = n
        Z[I] = Z[I] ** 2 + C[I]
    N[N == maxiter - 1] = 0
    return Z, N


@program((np.array([[0, 0, 0, 0, 0, 0],
                    [0, 1, 1, 1, 0, 0],
                    [0, 0, 0, 1, 0, 0],
                    [0, 1, 1, 1, 1, 0],
                    [0, 1, 0, 0, 1, 0],
                    [0, 0, 0, 0, 0, 0]], bool), (1, 1), 12),)
def maze_bellman_ford(Z, start, steps):
    # distances spread from the start through open cells by max-of-neighbours diffusion
    G = np.zeros(Z.shape)
    G[start] = 1
    gamma = 0.99
    for _ in range(steps):
        N = np.zeros_like(G)
        N[1:-1, 1:-1] = np.maximum.reduce([G[1:-1, 1:-1], G[:-2, 1:-1], G[2:, 1:-1],
                                           G[1:-1, :-2], G[1:-1, 2:]])
        G = gamma * N * Z
        G[start] = 1
    return G


@program((_g.random((10, 10)), _g.standard_normal((10, 10)) * 0.3, _g.standard_normal((10, 10)) * 0.3, 0.1, 0.01, 4),)
def smoke_diffuse_advect(x0, u, v, dt, diff, iters):
    N = x0.shape[0] - 2
    a = dt * diff * N * N
    x = x0.copy()
    for _ in range(iters):   # Gauss-Seidel-free Jacobi relaxation
        x[1:-1, 1:-1] = (x0[1:-1, 1:-1] + a * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])) / (1 + 4 * a)
    i, j = np.meshgrid(np.arange(1, N + 1), np.arange(1, N + 1), indexing="ij")
    px = np.clip(i - dt * N * u[1:-1, 1:-1], 0.5, N + 0.5)
    py = np.clip(j - dt * N * v[1:-1, 1:-1], 0.5, N + 0.5)
    i0, j0 = px.astype(int), py.astype(int)
    s1, t1 = px - i0, py - j0
    s0, t0 = 1 - s1, 1 - t1
    d = x.copy()
    d[1:-1, 1:-1] = (s0 * (t0 * x[i0, j0] + t1 * x[i0, j0 + 1]) +
                     s1 * (t0 * x[i0 + 1, j0] + t1 * x[i0 + 1, j0 + 1]))
    return x, d


@program((np.arange(1, 30),), (np.array([27, 97, 871]),))
def collatz_steps(n0):
    n = n0.copy()
    steps = np.zeros_like(n)
    active = n > 1
    while active.any():
        even = (n % 2 == 0) & active
        odd = ~even & active
        n[even] //= 2
        n[odd] = 3 * n[odd] + 1
        steps += active
        active = n > 1
    return steps


# ----------------------------------------------------------------------------- scipy-lectures

_populations = np.array([[1900, 30e3, 4e3, 48300], [1901, 47.2e3, 6.1e3, 48200], [1902, 70.2e3, 9.8e3, 41500],
                         [1903, 77.4e3, 35.2e3, 38200], [1904, 36.3e3, 59.4e3, 40600], [1905, 20.6e3, 41.7e3, 39800],
                         [1906, 18.1e3, 19e3, 38600], [1907, 21.4e3, 13e3, 42300], [1908, 22e3, 8.3e3, 44500]])


@program((_populations,), (_populations[:5].copy(),))
def population_statistics(data):
    year, hares, lynxes, carrots = data.T
    populations = data[:, 1:]
    species = np.array(["Hare", "Lynx", "Carrot"])
    return (populations.mean(axis=0), populations.std(axis=0), np.argmax(populations, axis=0),
            species[np.argmax(populations, axis=1)], year[np.any(populations > 50000, axis=1)],
            np.corrcoef(hares, lynxes)[0, 1], np.gradient(hares, 1.0))


@program((_g.random((5, 5)),), (np.eye(3)[[1, 2, 0]] * 0.5 + 0.5 / 3,))
def markov_stationary(P):
    P = P / np.sum(P, axis=1)[:, np.newaxis]
    p = np.random.default_rng(0).random(P.shape[0])
    p /= p.sum()
    for _ in range(50):
        p = P.T.dot(p)
    w, v = np.linalg.eig(P.T)
    j_stationary = np.argmin(abs(w - 1.0))
    p_stationary = v[:, j_stationary].real
    p_stationary /= p_stationary.sum()
    return p, p_stationary


# (every program ran on cpp, cpp-dynamic, eager and aot_eager, with the cost model on and
# off, when written; the fused ones keep C++ in the suite's budget)
_CPP = ("lstm_steps", "mandelbrot_counts", "collatz_steps", "smoke_diffuse_advect",
        "xray_edges", "centering", "rows_unequal", "k_nearest_neighbors", "sliding_windows", "random_walk")
test_program = program_test({k: PROGRAMS[k] for k in _CPP}, ["cpp"])
test_program_eager = program_test(PROGRAMS, ["eager", "aot_eager"], share=4)
