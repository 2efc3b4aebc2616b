// The CUDA copy engine (strided.h). Kernels are instantiated per element width only (1, 2, 4,
// 8 and 16 bytes) and per index width (32-bit linear indices when the block has fewer than
// 2^31 elements: 64-bit division is many times slower on the GPU), so the whole shape family
// compiles to a handful of small kernels.
#include "core/backend/cuda/kernels/strided.h"

#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

struct Dim {
  int64_t n, s, d;  // size, source stride, destination stride (elements)
};

// A copy's dims, passed by value to the kernels.
struct CopyArgs {
  int rank = 0;
  int64_t n[kMaxCopyRank] = {}, s[kMaxCopyRank] = {}, d[kMaxCopyRank] = {};
};

struct alignas(16) W16 {
  uint64_t lo, hi;
};

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;  // grid-stride beyond: ~4 waves of an H200 at 256 threads
constexpr int kTile = 32, kTileRows = 8;

__device__ int64_t load_index(const void* p, DType t) {
  switch (t) {
    case DType::kU8:
      return *static_cast<const uint8_t*>(p);
    case DType::kI8:
      return *static_cast<const int8_t*>(p);
    case DType::kI16:
      return *static_cast<const int16_t*>(p);
    case DType::kU16:
      return *static_cast<const uint16_t*>(p);
    case DType::kU64:
      return static_cast<int64_t>(*static_cast<const uint64_t*>(p));
    case DType::kU32:
      return *static_cast<const uint32_t*>(p);
    case DType::kI32:
      return *static_cast<const int32_t*>(p);
    case DType::kI64:
    default:  // integer starts only (shape_launch.cc's device_starts checks)
      return *static_cast<const int64_t*>(p);
  }
}

// The origin (elements) a DeviceStarts gives, as lax.dynamic_slice computes its starts.
__device__ int64_t starts_offset(const DeviceStarts& st) {
  int64_t off = 0;
  for (int d = 0; d < st.rank; ++d) {
    int64_t s = load_index(st.index[d], st.dtype[d]);
    if (s < 0) s += st.dim[d];
    const int64_t hi = st.dim[d] - st.size[d];
    s = s < 0 ? 0 : (s > hi ? hi : s);
    off += s * st.stride[d];
  }
  return off;
}

// One thread per element of the block (grid-stride); I is the linear index type.
template <typename W, typename I>
__global__ void __launch_bounds__(kThreads)
    copy_kernel(CopyArgs a, DeviceStarts st, bool starts_on_dst, const W* src, W* dst, I total) {
  if (st.rank > 0) {
    const int64_t off = starts_offset(st);
    if (starts_on_dst) {
      dst += off;
    } else {
      src += off;
    }
  }
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    I rest = i;
    int64_t so = 0, dof = 0;
    for (int t = a.rank - 1; t >= 0; --t) {
      const I n = static_cast<I>(a.n[t]);
      const I c = rest % n;
      rest /= n;
      so += static_cast<int64_t>(c) * a.s[t];
      dof += static_cast<int64_t>(c) * a.d[t];
    }
    dst[dof] = src[so];
  }
}

// Transpose-like blocks: dim j is the source's unit-stride dim, dim k the destination's. A
// block moves one kTile x kTile tile of (j, k) through shared memory so both the reads (along
// j) and the writes (along k) are coalesced; `outer` holds the remaining dims. Blocks are
// numbered (outer, tile of j, tile of k), k fastest.
struct TileArgs {
  CopyArgs outer;
  int64_t nj, nk;      // sizes of j and k
  int64_t sk, dj;      // source stride of k, destination stride of j
  int64_t tiles_j, tiles_k;
};

template <typename W>
__global__ void __launch_bounds__(kTile* kTileRows) transpose_kernel(TileArgs a, const W* src, W* dst) {
  __shared__ W tile[kTile][kTile + 1];  // +1: columns fall in different banks
  int64_t b = blockIdx.x;
  const int64_t tk = b % a.tiles_k;
  b /= a.tiles_k;
  const int64_t tj = b % a.tiles_j;
  b /= a.tiles_j;
  int64_t so = 0, dof = 0;
  for (int t = a.outer.rank - 1; t >= 0; --t) {
    const int64_t c = b % a.outer.n[t];
    b /= a.outer.n[t];
    so += c * a.outer.s[t];
    dof += c * a.outer.d[t];
  }
  const int64_t j0 = tj * kTile, k0 = tk * kTile;
  const int x = threadIdx.x, y = threadIdx.y;
  for (int r = y; r < kTile; r += kTileRows) {  // read: j = j0 + x (unit stride), k = k0 + r
    const int64_t j = j0 + x, k = k0 + r;
    if (j < a.nj && k < a.nk) tile[r][x] = src[so + j + k * a.sk];
  }
  __syncthreads();
  for (int r = y; r < kTile; r += kTileRows) {  // write: k = k0 + x (unit stride), j = j0 + r
    const int64_t j = j0 + r, k = k0 + x;
    if (j < a.nj && k < a.nk) dst[dof + k + j * a.dj] = tile[x][r];
  }
}

// Fills whole 16-byte words with the value repeated, then the tail element by element.
// `dst` is 16-byte aligned when `words` > 0.
template <typename W>
__global__ void __launch_bounds__(kThreads)
    fill_kernel(W* dst, int64_t n, int64_t words, const W* value) {
  const W v = *value;
  union {
    W16 word;
    W parts[sizeof(W16) / sizeof(W)];
  } pattern;
  for (int p = 0; p < int(sizeof(W16) / sizeof(W)); ++p) pattern.parts[p] = v;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  W16* out = reinterpret_cast<W16*>(dst);
  for (int64_t i = first; i < words; i += step) out[i] = pattern.word;
  const int64_t done = words * int64_t(sizeof(W16) / sizeof(W));
  for (int64_t i = done + first; i < n; i += step) dst[i] = v;
}

int blocks_for(int64_t work) {
  return static_cast<int>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <typename W>
void launch_copy(const std::vector<Dim>& dims, const void* src, void* dst,
                 const DeviceStarts& st, bool on_dst, cudaStream_t stream) {
  CopyArgs a;
  a.rank = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int t = 0; t < a.rank; ++t) {
    a.n[t] = dims[t].n;
    a.s[t] = dims[t].s;
    a.d[t] = dims[t].d;
    total *= dims[t].n;
  }
  const W* s = static_cast<const W*>(src);
  W* d = static_cast<W*>(dst);
  if (total < (int64_t{1} << 31)) {
    copy_kernel<W, uint32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        a, st, on_dst, s, d, static_cast<uint32_t>(total));
  } else {
    copy_kernel<W, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(a, st, on_dst, s, d,
                                                                       total);
  }
  check(cudaGetLastError(), "strided copy kernel");
}

// Launches the tiled transpose for dims[k] (destination unit stride) and dims[j] (source
// unit stride); false when the grid would be too large (the caller copies generically).
template <typename W>
bool launch_transpose(const std::vector<Dim>& dims, int j, int k, const void* src, void* dst,
                      cudaStream_t stream) {
  TileArgs a;
  a.nj = dims[j].n;
  a.nk = dims[k].n;
  a.sk = dims[k].s;
  a.dj = dims[j].d;
  a.tiles_j = (a.nj + kTile - 1) / kTile;
  a.tiles_k = (a.nk + kTile - 1) / kTile;
  int64_t blocks = a.tiles_j * a.tiles_k;
  for (int t = 0; t < static_cast<int>(dims.size()); ++t) {
    if (t == j || t == k) continue;
    const int r = a.outer.rank++;
    a.outer.n[r] = dims[t].n;
    a.outer.s[r] = dims[t].s;
    a.outer.d[r] = dims[t].d;
    blocks *= dims[t].n;
  }
  if (blocks > 0x7fffffff) return false;
  transpose_kernel<W><<<static_cast<unsigned>(blocks), dim3(kTile, kTileRows), 0, stream>>>(
      a, static_cast<const W*>(src), static_cast<W*>(dst));
  check(cudaGetLastError(), "transpose kernel");
  return true;
}

// Rows contiguous on both sides: copy them in words of twice the size while the row length,
// every other stride and both pointers allow, up to 16 bytes.
int64_t widen(std::vector<Dim>& dims, int64_t esize, const void* src, const void* dst) {
  if (dims.empty() || dims.back().s != 1 || dims.back().d != 1) return esize;
  while (esize < 16) {
    const int64_t w = esize * 2;
    bool ok = dims.back().n % 2 == 0 && reinterpret_cast<uintptr_t>(src) % w == 0 &&
              reinterpret_cast<uintptr_t>(dst) % w == 0;
    for (size_t t = 0; ok && t + 1 < dims.size(); ++t) ok = dims[t].s % 2 == 0 && dims[t].d % 2 == 0;
    if (!ok) break;
    for (size_t t = 0; t + 1 < dims.size(); ++t) {
      dims[t].s /= 2;
      dims[t].d /= 2;
    }
    dims.back().n /= 2;
    esize = w;
  }
  return esize;
}

template <typename Fn>
void dispatch_width(int64_t esize, Fn&& fn) {
  switch (esize) {
    case 1:
      return fn.template operator()<uint8_t>();
    case 2:
      return fn.template operator()<uint16_t>();
    case 4:
      return fn.template operator()<uint32_t>();
    case 8:
      return fn.template operator()<uint64_t>();
    case 16:
      return fn.template operator()<W16>();
  }
  graft::fail("strided_copy", "unsupported element size ", esize);
}

}  // namespace

void strided_copy(int64_t esize, const Shape& dims, const void* src, const Shape& src_strides,
                  void* dst, const Shape& dst_strides, cudaStream_t stream,
                  const DeviceStarts* starts, StartsSide side) {
  if (esize != 1 && esize != 2 && esize != 4 && esize != 8 && esize != 16) {
    graft::fail("strided_copy", "unsupported element size ", esize);
  }
  // Drop size-1 dims, then merge neighbours that are contiguous in both layouts (as the CPU).
  std::vector<Dim> merged;
  for (size_t t = 0; t < dims.size(); ++t) {
    if (dims[t] == 0) return;
    if (dims[t] == 1) continue;
    Dim cur{dims[t], src_strides[t], dst_strides[t]};
    if (!merged.empty() && merged.back().s == cur.s * cur.n && merged.back().d == cur.d * cur.n) {
      merged.back() = {merged.back().n * cur.n, cur.s, cur.d};
    } else {
      merged.push_back(cur);
    }
  }
  if (merged.size() > static_cast<size_t>(kMaxCopyRank)) {
    graft::fail("strided_copy", merged.size(), " dims after merging; the CUDA kernel takes at most ",
         kMaxCopyRank);
  }
  const bool dynamic = starts != nullptr && starts->rank > 0;
  if (dynamic && starts->rank > kMaxCopyRank) {
    graft::fail("strided_copy", starts->rank, " start indices; at most ", kMaxCopyRank);
  }
  const int r = static_cast<int>(merged.size());
  if (!dynamic && (r == 0 || (r == 1 && merged[0].s == 1 && merged[0].d == 1))) {
    const int64_t n = r == 0 ? 1 : merged[0].n;
    check(cudaMemcpyAsync(dst, src, static_cast<size_t>(n * esize), cudaMemcpyDeviceToDevice,
                          stream),
          "cudaMemcpyAsync (strided copy)");
    return;
  }
  // Transpose-like: the destination's unit-stride dim reads the source with a stride, and
  // another dim is the source's unit-stride one.
  if (!dynamic && r >= 2 && merged[r - 1].d == 1 && merged[r - 1].s != 1 && merged[r - 1].s != 0) {
    int j = -1;
    for (int t = r - 2; t >= 0 && j < 0; --t) {
      if (merged[t].s == 1) j = t;
    }
    if (j >= 0) {
      bool done = false;
      dispatch_width(esize, [&]<typename W>() {
        if constexpr (sizeof(W) <= 8) done = launch_transpose<W>(merged, j, r - 1, src, dst, stream);
      });
      if (done) return;
    }
  }
  DeviceStarts none;
  const DeviceStarts& st = dynamic ? *starts : none;
  const int64_t w = dynamic ? esize : widen(merged, esize, src, dst);
  dispatch_width(w, [&]<typename W>() {
    launch_copy<W>(merged, src, dst, st, side == StartsSide::kDestination, stream);
  });
}

void fill(int64_t esize, void* dst, int64_t n, const void* value, cudaStream_t stream) {
  if (n <= 0) return;
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  const int64_t words = aligned ? n * esize / 16 : 0;
  const int64_t tail = n - words * 16 / esize;
  const int blocks = blocks_for(std::max(words, tail));
  switch (esize) {
    case 1:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint8_t*>(dst), n, words,
                                                  static_cast<const uint8_t*>(value));
      break;
    case 2:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint16_t*>(dst), n, words,
                                                  static_cast<const uint16_t*>(value));
      break;
    case 4:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint32_t*>(dst), n, words,
                                                  static_cast<const uint32_t*>(value));
      break;
    case 8:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint64_t*>(dst), n, words,
                                                  static_cast<const uint64_t*>(value));
      break;
    case 16:  // c128: dst and value are 16-byte aligned (allocator blocks, whole elements)
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<W16*>(dst), n, words,
                                                  static_cast<const W16*>(value));
      break;
    default:
      graft::fail("fill", "unsupported element size ", esize);
  }
  check(cudaGetLastError(), "fill kernel");
}

}  // namespace graft::cuda
