"""kiln's eager Tensor: NumPy code, recorded, differentiated.

Run:  python examples/eager_gradient.py
"""
import numpy as np

import kiln


def loss(w, x, y):
    """Mean squared error of a tiny tanh layer, written in plain NumPy."""
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


rng = np.random.default_rng(0)
x = rng.standard_normal((32, 4))
y = rng.standard_normal((32, 2))
w = kiln.tensor(rng.standard_normal((4, 2)), requires_grad=True)

value = loss(w, x, y)
value.backward()
print(f"loss = {value.item():.6f}")
print("d loss / d w =")
print(w.grad.numpy())

# The same gradient, JAX style, and checked against finite differences.
g = kiln.grad(loss)(w.numpy(), x, y)
assert np.allclose(g, w.grad.numpy())
assert kiln.autograd.gradcheck(lambda w: loss(w, x, y), (w.numpy(),))
print("matches kiln.grad and finite differences")

# Ten steps of gradient descent; the update runs under no_grad.
for step in range(10):
    w.grad = None
    value = loss(w, x, y)
    value.backward()
    with kiln.no_grad():
        w -= 0.5 * w.grad
print(f"after 10 steps: loss = {loss(w, x, y).item():.6f}")
