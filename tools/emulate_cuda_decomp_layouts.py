# Checks, on the CPU, the row- / column-major arithmetic of the CUDA factorization kernels
# (core/backend/cuda/decomp/decomp_kernels.cc): each cuSOLVER / cuBLAS call there is replayed
# with the LAPACK / BLAS routine of the same semantics (scipy.linalg.lapack / blas), on the
# same buffers read the same way, and compared with numpy. No GPU needed; nothing in the build
# depends on it. Run: ~/.cache/graft-peers/venv/bin/python tools/emulate_cuda_decomp_layouts.py
import numpy as np, scipy.linalg as sl
from scipy.linalg import lapack, blas
rng = np.random.default_rng(0)
def colview(buf, r, c): return buf.reshape((r, c), order='F').copy(order='F')
def rowbuf(M): return np.asarray(M).ravel(order='F')  # col-major matrix -> its buffer
ok = True
def chk(name, a, b, tol=1e-10):
    global ok
    e = np.max(np.abs(a - b)) if a.size else 0
    if not e < tol: ok = False
    print(name, "err", e)
# cholesky
n = 5; X = rng.normal(size=(n, n)); A = X @ X.T + n * np.eye(n)
A2 = A.copy(); A2[np.triu_indices(n, 1)] = 99  # only the lower triangle may be read
c, info = lapack.dpotrf(colview(A2.ravel(), n, n), lower=0, clean=0)
L = np.tril(rowbuf(c).reshape(n, n)); chk("cholesky", L, np.linalg.cholesky(A))
# svd wide / square
for (m, nn) in [(3, 5), (4, 4)]:
    A = rng.normal(size=(m, nn)); k = min(m, nn)
    for full in (True, False):
        B = colview(A.ravel(), nn, m)
        u, s, vt, info = lapack.dgesvd(B, compute_uv=1, full_matrices=full)
        vr = nn if full else k; uc = m if full else k
        vt_out = rowbuf(u).reshape(vr, nn); u_out = rowbuf(vt).reshape(m, uc)
        chk(f"svd wide {m}x{nn} full={full}", (u_out[:, :k] * s) @ vt_out[:k], A)
        chk("  s", s, np.linalg.svd(A, compute_uv=False))
# svd tall
m, nn = 6, 4; A = rng.normal(size=(m, nn)); k = 4
for full in (True, False):
    u, s, vt, info = lapack.dgesvd(np.asfortranarray(A), compute_uv=1, full_matrices=full)
    chk(f"svd tall full={full}", (u[:, :k] * s) @ vt[:k], A)
# eigh
n = 5; A = rng.normal(size=(n, n))
for lower in (True, False):
    w, v, info = lapack.dsyevd(colview(A.ravel(), n, n), compute_v=1, lower=0 if lower else 1)
    S = np.tril(A) + np.tril(A, -1).T if lower else np.triu(A) + np.triu(A, 1).T
    w2, v2 = np.linalg.eigh(S)
    chk(f"eigh lower={lower} w", w, w2); chk("  |v|", np.abs(v), np.abs(v2), 1e-8)
# trsm
ma = 4
A = rng.normal(size=(ma, ma)) + 8 * np.eye(ma)
for f in range(16):
    left, lower, trans, unit = bool(f & 1), bool(f & 2), bool(f & 4), bool(f & 8)
    B = rng.normal(size=(4, 3) if left else (3, 4)); bm, bn = B.shape
    Xv = blas.dtrsm(1.0, colview(A.ravel(), ma, ma), colview(B.ravel(), bn, bm),
                    side=1 if left else 0, lower=0 if lower else 1, trans_a=1 if trans else 0,
                    diag=1 if unit else 0)
    X = rowbuf(Xv).reshape(bm, bn)
    T = np.tril(A) if lower else np.triu(A)
    if unit: T = T - np.diag(np.diag(T)) + np.eye(ma)
    op = T.T if trans else T
    want = np.linalg.solve(op, B) if left else np.linalg.solve(op.T, B.T).T
    chk(f"trsm flags {f}", X, want)
print("ALL OK" if ok else "SOME FAILED")
raise SystemExit(0 if ok else 1)
