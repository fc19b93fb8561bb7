"""Walk-through: optimizing a matrix multiply with tensor expressions and schedules.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/te_matmul.py [n]

Each step keeps the computation and changes only the schedule; each prints its time.
"""
import sys
import time

import numpy as np

import anvil
from anvil import te


def measure(f, a, b, c, repeat=5):
    f(a, b, c)
    start = time.perf_counter()
    for _ in range(repeat):
        f(a, b, c)
    return (time.perf_counter() - start) / repeat * 1e3


def main(n=512, show_ir=True):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

    a_np = np.random.rand(n, n).astype("float32")
    b_np = np.random.rand(n, n).astype("float32")
    a, b = anvil.nd.array(a_np), anvil.nd.array(b_np)
    c = anvil.nd.empty((n, n))
    expected = a_np @ b_np

    def schedule_default():
        return te.create_schedule(C.op)

    def schedule_tiled():
        # Blocks of 32x32 outputs keep a tile of B in cache; k outside the block's inner loops.
        s = te.create_schedule(C.op)
        io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
        ko, ki = s[C].split(k, factor=4)
        s[C].reorder(io, jo, ko, ki, ii, ji)
        return s

    def schedule_vectorized_parallel():
        s = schedule_tiled()
        io, jo, ko, ki, ii, ji = s[C].leaf_iter_vars
        s[C].unroll(ki)
        s[C].vectorize(ji)   # the innermost j loop becomes vector instructions
        s[C].parallel(io)    # row blocks run on the thread pool
        return s

    results = {}
    for name, make in [("default", schedule_default), ("tiled", schedule_tiled),
                       ("vectorized + parallel", schedule_vectorized_parallel)]:
        s = make()
        if show_ir and name == "vectorized + parallel":
            print(anvil.lower(s, [A, B, C]))
        f = anvil.build(s, [A, B, C], target="llvm -mcpu=native")
        ms = measure(f, a, b, c)
        np.testing.assert_allclose(c.numpy(), expected, rtol=1e-3, atol=1e-3)
        gflops = 2 * n ** 3 / ms / 1e6
        print(f"{name:>24}: {ms:8.3f} ms  {gflops:7.1f} GFLOP/s")
        results[name] = ms
    asm = f.get_source("asm")
    print(f"the last kernel has {len(asm.splitlines())} lines of assembly")
    return results


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 512)
