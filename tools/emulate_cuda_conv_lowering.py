# Checks, on the CPU, the lowering of the CUDA conv_general_dilated kernel
# (core/backend/cuda/conv/conv_kernels.cc): its Arrange specs (conv_device.h) for the input,
# the kernel and the output, and the dense NC... / OI... grouped cross-correlation without
# padding that cuDNN computes, replayed in numpy with the same index arithmetic, against
# jax.lax.conv_general_dilated on the cases of tests/cuda/conv_cuda_test.cc. No GPU needed;
# nothing in the build depends on it.
# Run: ~/.cache/graft-peers/venv/bin/python tools/emulate_cuda_conv_lowering.py
import numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)

def rms(shape):
    st = [1] * len(shape)
    for i in range(len(shape) - 1, 0, -1): st[i - 1] = st[i] * shape[i]
    return st

def arrange(src_flat, dims):  # dims: list of (size, stride, lo, dil, extent)
    shape = [d[0] for d in dims]; out = np.zeros(int(np.prod(shape)))
    for i in range(out.size):
        rem, off, inside = i, 0, True
        for (size, stride, lo, dil, ext) in reversed(dims):
            pos = rem % size - lo; rem //= size
            if pos < 0 or pos % dil or pos // dil >= ext: inside = False
            else: off += pos // dil * stride
        out[i] = src_flat[off] if inside else 0
    return out.reshape(shape)

def plain(size, stride): return (size, stride, 0, 1, size)

def canonical_conv(x, w, strides, dil, groups):  # x [N,C,sp], w [O,C/g,win], no padding
    N, C = x.shape[:2]; O, I = w.shape[:2]; sp = x.shape[2:]; win = w.shape[2:]
    out_sp = [(sp[i] - (dil[i] * (win[i] - 1) + 1)) // strides[i] + 1 for i in range(len(sp))]
    y = np.zeros([N, O] + out_sp); per = O // groups
    for o in range(O):
        g = o // per
        for idx in np.ndindex(*out_sp):
            acc = np.zeros(N)
            for t in np.ndindex(*win):
                pos = tuple(idx[i] * strides[i] + t[i] * dil[i] for i in range(len(sp)))
                acc += np.einsum('nc,c->n', x[(slice(None), slice(g * I, (g + 1) * I)) + pos], w[(o, slice(None)) + t])
            y[(slice(None), o) + idx] = acc
    return y

def lowered(l, r, strides, pads, ldil, rdil, dn, fg, bg, out_shape):
    ld, rd, od = dn; n = l.ndim - 2
    lst, rst = rms(l.shape), rms(r.shape)
    batch = out_shape[od[0]]; feat = l.shape[ld[1]]
    spatial = max(n, 2); lead = spatial - n
    groups = bg if bg > 1 else fg
    lx = [plain(batch, lst[ld[0]]), plain(bg, batch * lst[ld[0]]), plain(feat, lst[ld[1]])]
    lx += [plain(1, 0)] * lead
    for i in range(n):
        size = l.shape[ld[2 + i]]; lo, hi = pads[i]
        padded = max(0, (0 if size == 0 else 1 + ldil[i] * (size - 1)) + lo + hi)
        lx.append((padded, lst[ld[2 + i]], lo, ldil[i], size))
    x = arrange(l.ravel(), lx); x = x.reshape([batch, bg * feat] + list(x.shape[3:]))
    rw = [plain(r.shape[rd[0]], rst[rd[0]]), plain(r.shape[rd[1]], rst[rd[1]])] + [plain(1, 0)] * lead
    rw += [plain(r.shape[rd[2 + i]], rst[rd[2 + i]]) for i in range(n)]
    w = arrange(r.ravel(), rw)
    y = canonical_conv(x, w, [1] * lead + list(strides), [1] * lead + list(rdil), groups)
    yst = rms(y.shape); src = [0] * len(out_shape)
    src[od[0]] = yst[0]; src[od[1]] = yst[1]
    for i in range(n): src[od[2 + i]] = yst[2 + lead + i]
    return arrange(y.ravel(), [plain(out_shape[d], src[d]) for d in range(len(out_shape))])

cases = [
    ("2-D NCHW SAME", (2, 3, 9, 8), (4, 3, 3, 3), (1, 1), "SAME", None, None, None, 1, 1),
    ("NHWC", (2, 10, 9, 3), (3, 2, 3, 5), (2, 1), [(1, 0), (2, -1)], None, (1, 2), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ("1-D lhs dil", (2, 3, 7), (4, 3, 3), (1,), [(2, 2)], (2,), None, None, 1, 1),
    ("3-D fg", (1, 4, 5, 6, 4), (6, 2, 2, 3, 2), (1, 2, 1), "VALID", None, None, None, 2, 1),
    ("bg", (4, 3, 6, 5), (6, 3, 3, 2), (1, 1), "VALID", None, None, None, 1, 2),
    ("out NHWC", (2, 3, 7, 6), (5, 3, 2, 2), (1, 2), "SAME", None, None, ("NCHW", "OIHW", "NHWC"), 1, 1),
]
ok = True
for (name, ls, rs, st, pad, ldil, rdil, dns, fg, bg) in cases:
    l = rng.normal(size=ls); r = rng.normal(size=rs); n = len(ls) - 2
    dn = jax.lax.conv_dimension_numbers(ls, rs, dns)
    want = np.asarray(jax.lax.conv_general_dilated(l, r, st, pad, ldil, rdil, dns, fg, bg))
    win = [rs[dn.rhs_spec[2 + i]] for i in range(n)]
    if isinstance(pad, str):
        ins = [ (ls[dn.lhs_spec[2+i]] - 1) * (ldil or [1]*n)[i] + 1 for i in range(n)]
        dwin = [ (win[i] - 1) * (rdil or [1]*n)[i] + 1 for i in range(n)]
        pads = jax.lax.padtype_to_pads(ins, dwin, st, pad)
    else: pads = pad
    got = lowered(l, r, st, pads, ldil or [1] * n, rdil or [1] * n,
                  (dn.lhs_spec, dn.rhs_spec, dn.out_spec), fg, bg, want.shape)
    e = np.max(np.abs(got - want)); ok &= e < 1e-9
    print(name, want.shape, "err", e)
print("ALL OK" if ok else "SOME FAILED")
raise SystemExit(0 if ok else 1)
