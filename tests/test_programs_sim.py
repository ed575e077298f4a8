"""Scientific simulation and numerical methods through kiln.compile, checked like
tests/test_programs.py (values, dtypes, shapes, exceptions, argument states, aliasing):
ODE steppers, PDE stencils with boundary conditions written in place, particles, Monte
Carlo with a Generator passed in, cellular automata, iterative solvers and quadrature.
Shapes are few and small: every distinct graph costs one g++ build.
"""
from __future__ import annotations

import numpy as np

from tests.test_programs import BACKENDS, program_registry, program_test

f32 = np.float32
_rng = np.random.default_rng(2026)

PROGRAMS, program = program_registry()   # name -> (fn, the calls it is checked on)


def rn(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- programs

def _oscillator(x, v, k, c):
    return v, -k * x - c * v


@program((np.linspace(0, 1, 5), np.zeros(5), 0.01, 4),
         (np.linspace(0, 1, 5).astype(f32), np.zeros(5, f32), 0.01, 4))
def rk4_tuple_state(x0, v0, dt, nsteps):
    x, v = x0.copy(), v0.copy()
    for _ in range(nsteps):
        k1x, k1v = _oscillator(x, v, 4.0, 0.1)
        k2x, k2v = _oscillator(x + 0.5 * dt * k1x, v + 0.5 * dt * k1v, 4.0, 0.1)
        k3x, k3v = _oscillator(x + 0.5 * dt * k2x, v + 0.5 * dt * k2v, 4.0, 0.1)
        k4x, k4v = _oscillator(x + dt * k3x, v + dt * k3v, 4.0, 0.1)
        x = x + dt / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v = v + dt / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
    return x, v, (0.5 * v ** 2 + 2.0 * x ** 2).sum()


@program((np.sin(np.linspace(0, np.pi, 12)), 0.4, 3), (np.array([1.0, 2.0]), 0.4, 3))
def heat_dirichlet_on_the_argument(u, alpha, steps):
    # the caller's array updated in place, boundaries written after each step
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0] = 0.0
        u[-1] = 0.0
    return u


@program((rn(6, 7), 1e-3, 40), (np.asfortranarray(rn(5, 5)), 1e-1, 40))
def laplace_neumann_until_converged(u, tol, maxit):
    u = u.copy()
    for it in range(maxit):
        old = u.copy()
        u[1:-1, 1:-1] = 0.25 * (old[:-2, 1:-1] + old[2:, 1:-1] + old[1:-1, :-2] + old[1:-1, 2:])
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]
        err = np.abs(u - old).max()
        if err < tol:
            break
    return u, it, err


@program((np.array([[0, 1, 0, 0], [0, 0, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0]], bool), 2),)
def life_with_wrapped_padding(b, n):
    for _ in range(n):
        p = np.pad(b, 1, mode="wrap").astype(np.int8)
        nb = (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 2:]
              + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:])
        b = np.logical_or(np.logical_and(b, (nb == 2) | (nb == 3)), np.logical_and(~b, nb == 3))
    return b, np.count_nonzero(b, axis=0)


@program(lambda: (np.where(np.random.default_rng(1).random((6, 6)) < 0.5, -1, 1).astype(np.int8),
                  0.5, np.random.default_rng(2)),)
def ising_checkerboard_sweep(spins, beta, gen):
    ii, jj = np.indices(spins.shape)
    for parity in (0, 1):
        mask = (ii + jj) % 2 == parity
        nb = np.roll(spins, 1, 0) + np.roll(spins, -1, 0) + np.roll(spins, 1, 1) + np.roll(spins, -1, 1)
        dE = 2 * spins * nb
        accept = (dE <= 0) | (gen.random(spins.shape) < np.exp(-beta * dE))
        spins[mask & accept] *= -1
    return spins.mean(), spins


@program((np.array([[4.0, -1, 0], [-1, 4, -1], [0, -1, 4]]), np.array([15.0, 10, 10]), 1e-10, 100),
         (np.array([[4.0, -1], [-1, 4]]), np.array([1.0, 2.0]), 1e-8, 3))
def jacobi_with_early_return(A, b, tol, maxiter):
    D = np.diag(A)
    R = A - np.diagflat(D)
    x = np.zeros_like(b)
    it = 0
    while it < maxiter:
        x_new = (b - R @ x) / D
        if np.linalg.norm(x_new - x, ord=np.inf) < tol:
            return x_new, it, True
        x = x_new
        it += 1
    return x, it, False


@program((np.full(5, 2.0), np.full(4, -1.0), np.full(4, -1.0), np.array([1.0, 0, 0, 0, 1])),
         (np.array([4.0]), np.array([]), np.array([]), np.array([8.0])))
def thomas_tridiagonal(diag, lower, upper, rhs):
    n = len(diag)
    c = np.zeros(max(n - 1, 0))
    d = np.zeros(n)
    if n > 1:
        c[0] = upper[0] / diag[0]
    d[0] = rhs[0] / diag[0]
    for i in range(1, n):
        m = diag[i] - lower[i - 1] * c[i - 1]
        if i < n - 1:
            c[i] = upper[i] / m
        d[i] = (rhs[i] - lower[i - 1] * d[i - 1]) / m
    x = np.empty(n)
    x[-1] = d[-1]
    for i in range(n - 2, -1, -1):
        x[i] = d[i] - c[i] * x[i + 1]
    return x


@program((np.array([0.1, 0.5, 0.5, 2.3, 3.9]), np.arange(1.0, 6.0), 4, 4.0),
         (np.array([0.0]), np.array([1.0]), 2, 1.0))
def cloud_in_cell_deposit(x, m, ng, L):
    grid = np.zeros(ng)
    xi = x / (L / ng)
    i0 = np.floor(xi).astype(int)
    w1 = xi - i0
    np.add.at(grid, i0 % ng, m * (1 - w1))
    np.add.at(grid, (i0 + 1) % ng, m * w1)
    return grid, grid.sum()


@program((np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49, 3.0]), 1.0),
         (np.array([[0.5, 4.5], [-3.5, 9.0]], f32), 2.0))
def minimum_image_rounds_half_to_even(d, L):
    d = d - L * np.round(d / L)
    return d, np.rint(d * 2) / 2, np.round(d * 10, decimals=-1), (d // 0.3, d % 0.3)


@program((np.array([1.0, 0.0]), 0.0, 1.0, 1e-4),)
def adaptive_step_with_rejections(y0, t0, t1, tol):
    def f(t, y):
        return np.array([y[1], -y[0]])
    t, y, h = t0, y0.copy(), 0.5
    accepted = rejected = 0
    while t < t1:
        h = min(h, t1 - t)
        k1 = f(t, y)
        y2 = y + h * f(t + h / 2, y + h / 2 * k1)
        y1 = y + h * k1
        err = np.max(np.abs(y2 - y1))
        if err <= tol:
            t += h
            y = y2
            accepted += 1
        else:
            rejected += 1
        h = 0.9 * h * (tol / max(err, 1e-16)) ** 0.5
    return y, t, accepted, rejected


@program(lambda: (np.zeros((4, 2)), np.zeros((4, 2)), np.random.default_rng(1), 0.01, 3, 1.0),
         lambda: (np.zeros((2, 3), f32), np.zeros((2, 3), f32), np.random.default_rng(2), 0.1, 2, 0.5))
def langevin_state_in_a_dict(x, v, gen, dt, steps, gamma):
    state = {"x": x, "v": v, "t": 0.0}
    sigma = np.sqrt(2 * gamma * dt)
    for _ in range(steps):
        noise = gen.normal(0.0, sigma, size=x.shape)
        state["v"] = state["v"] - gamma * state["v"] * dt - state["x"] * dt + noise
        state["x"] = state["x"] + state["v"] * dt
        state["t"] += dt
    return state


@program((np.zeros((4, 3)), rn(4, 3), 0.1, 3),)
def bouncing_particles_in_place(pos, vel, dt, n):
    for _ in range(n):
        pos[:, :2] += vel[:, :2] * dt
        vel[:, 2] -= 9.81 * dt
        pos[:, 2] += vel[:, 2] * dt
        below = pos[:, 2] < 0
        pos[below, 2] *= -1
        vel[below, 2] *= -0.9
    return pos, vel


@program((np.arange(10.0), np.ones(9)), (np.arange(7, dtype=np.int32), np.arange(6, dtype=np.int32)))
def augmented_slice_assignments(u, x):
    # each x[i] op= v ends with x[i] = <the view>: a no-op NumPy skips (overlaps included)
    u[1:] += x
    u[::2] *= 2
    u[1:][::2] -= 1
    u[-3:] += u[:3]
    u[1:] += u[:-1]
    u[:-1] -= u[1:]
    return u, u[2:]


@program((rn(5, 4),), (rn(6, 4)[::2, ::-1],))
def augmented_assignments_2d(g):
    g[1:-1, 1:-1] += 0.5 * g[:-2, 1:-1]
    g[:, 0] += g[:, 1]
    g[g > 0] += 100           # a boolean index: a copy, so its store is the write
    g[[0, 0, 1]] += 1         # repeated rows get one increment, as in NumPy
    v = g[1:]
    v += 1
    g[1:] = v
    return g.sum(axis=0), g


test_program = program_test(PROGRAMS, BACKENDS, share=8)
