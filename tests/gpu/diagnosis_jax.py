"""A JAX training-like loop that keeps 64 MiB of device memory per step (issue 15, point 4).

    python3 diagnosis_jax.py [STEPS] [--no-bytes]

Run it with JAX's defaults (XLA preallocates 75 % of the card at start: the driver sees a flat
line) and with XLA_PYTHON_CLIENT_PREALLOCATE=false (the driver sees the pool grow). Each step
ends with "step N allocated=BYTES reserved=BYTES" (the device's memory_stats(): bytes_in_use,
pool_bytes or bytes_reserved) on stdout and in $VRAMDOC_MARK_FILE when vramdoc run sets it;
with --no-bytes the marks are plain "step N" (what a job that logs no memory statistics gives).
"""
import os
import sys
import time

import jax
import jax.numpy as jnp

MARK_FILE = os.environ.get("VRAMDOC_MARK_FILE")
dev = jax.devices()[0]


NO_BYTES = "--no-bytes" in sys.argv[1:]


def mark(label):
    if NO_BYTES:
        line = label
        print(line, flush=True)
        if MARK_FILE:
            with open(MARK_FILE, "a") as f:
                f.write(line + "\n")
        return
    stats = dev.memory_stats() or {}
    used = stats.get("bytes_in_use", 0)
    pool = stats.get("pool_bytes", stats.get("bytes_reserved", 0))
    line = f"{label} allocated={used} reserved={pool}"
    print(line, flush=True)
    if MARK_FILE:
        with open(MARK_FILE, "a") as f:
            f.write(line + "\n")


@jax.jit
def step(w, x):
    def loss(w):
        return jnp.mean(jnp.tanh(x @ w) ** 2)
    return w - 1e-3 * jax.grad(loss)(w)


def main():
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    steps = int(numbers[0]) if numbers else 60
    key = jax.random.PRNGKey(0)
    w = jax.random.normal(key, (4096, 4096), jnp.float32)
    x = jax.random.normal(key, (2048, 4096), jnp.float32)
    kept = []
    for i in range(steps):
        w = step(w, x)
        kept.append(jnp.full((16 << 20,), float(i), jnp.float32))  # 64 MiB kept per step
        jax.block_until_ready((w, kept[-1]))
        mark(f"step {i}")
        time.sleep(0.05)


if __name__ == "__main__":
    main()
