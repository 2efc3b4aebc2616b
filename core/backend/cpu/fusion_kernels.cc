// CPU kernel of fused_elementwise: the element range is cut into tiles of kTile elements,
// whole tiles are split over the thread pool, and each tile runs every step into small
// per-thread tile buffers that stay in L1 (f32 for f16/bf16: carried in f32 through the
// group and rounded where a value leaves it or is explicitly converted, as XLA's default
// excess precision does; see fusion.h), writing only the group's outputs. f32/f64/bool inputs are read in place
// and f32/f64/bool outputs are written in place, so a chain of ops costs one read of its
// inputs and one write of its outputs. Steps: fusion_kernels_steps.cc. Groups of f32 steps
// run as compiled loops instead (fusion_codegen.cc: intermediates stay in registers).
#include "core/backend/cpu/fusion_kernels.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/backend/cpu/bf16_convert.h"
#include "core/backend/cpu/fusion_codegen.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/error.h"
#include "core/primitives/fusion.h"

namespace graft::cpu {
namespace {

using fusion::Kind;
using fusion::kind_of;
using P = PrimitiveId;
// Elements per tile: a slot's tile is 2 KiB (f32) or 4 KiB (f64), so a chain's slots stay in
// L1 between steps. A multiple of every packet width, so tiles start packet-aligned.
constexpr int64_t kTile = 512;
constexpr int64_t kGrainTiles = 32;  // tiles per parallel chunk, at least (16K elements)

bool is_half(DType d) { return d == DType::kF16 || d == DType::kBF16; }

template <typename S, typename D>
void convert(const S* x, D* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<D>(x[i]);
}

// Copies (widening f16/bf16) `n` elements of an input into a tile.
void load(DType d, const void* src, void* dst, int64_t n) {
  if (d == DType::kF16) return convert(static_cast<const f16*>(src), static_cast<float*>(dst), n);
  if (d == DType::kBF16)
    return widen_bf16(static_cast<const bf16*>(src), static_cast<float*>(dst), n);
  std::memcpy(dst, src, n * dtype_size(d));
}

// Bytes per element in a tile: f16 / bf16 are widened to f32.
int64_t tile_width(DType d) {
  const Kind k = kind_of(d);
  return k == Kind::kF64 ? 8 : (k == Kind::kBool ? 1 : 4);
}

// Fills a tile with one (widened) scalar.
void fill_scalar(DType d, const void* src, void* dst, int64_t n) {
  const int64_t w = tile_width(d);
  load(d, src, dst, 1);
  for (int64_t i = 1; i < n; ++i) std::memcpy(static_cast<char*>(dst) + i * w, dst, w);
}

// Rounds f32 values as a half type stores them (the unfused op writes that type).
template <typename H>
void round_as(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(H(v[i]));
}

// Tile memory, kept per thread across calls (a small call must not pay for allocating and
// zeroing it). A nested use on the same thread (not expected: steps call no kernels) gets
// an allocation of its own.
class Scratch {
 public:
  explicit Scratch(size_t doubles) {
    State& s = state();
    if (!s.busy) {
      if (s.cap < doubles) {
        std::free(s.data);
        s.data = nullptr;
        s.cap = 0;
        s.data = alloc(doubles);
        s.cap = doubles;
      }
      s.busy = true;
      data_ = s.data;
      shared_ = true;
    } else {
      data_ = alloc(doubles);
    }
  }
  ~Scratch() {
    if (shared_) {
      state().busy = false;
    } else {
      std::free(data_);
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  double* data() const { return data_; }

 private:
  struct State {
    double* data = nullptr;
    size_t cap = 0;
    bool busy = false;
    ~State() { std::free(data); }
  };
  static State& state() {
    thread_local State s;
    return s;
  }
  static double* alloc(size_t doubles) {
    const size_t bytes = (doubles * sizeof(double) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw AllocError(bytes, "a fused group's scratch");
    return static_cast<double*>(p);
  }
  double* data_ = nullptr;
  bool shared_ = false;
};

// Elements [s, s + len) of a broadcast input (FusedRead) into a tile, widened: runs of one
// value when div > 1, contiguous pieces of the input when div == 1.
void load_broadcast(const fusion::GroupRunner::Input& in, int64_t s, int64_t len, void* dst) {
  const int64_t div = in.read.div, size = in.read.size;
  const int64_t w = tile_width(in.dtype);
  char* out = static_cast<char*>(dst);
  for (int64_t j = 0; j < len;) {
    const int64_t e = s + j, at = (e / div) % size;
    if (div == 1) {
      const int64_t run = std::min(len - j, size - at);
      load(in.dtype, in.data + at * in.width, out + j * w, run);
      j += run;
    } else {
      const int64_t run = std::min(len - j, div - e % div);
      load(in.dtype, in.data + at * in.width, out + j * w, 1);
      for (int64_t k = 1; k < run; ++k) std::memcpy(out + (j + k) * w, out + j * w, w);
      j += run;
    }
  }
}

}  // namespace

namespace fusion {

GroupRunner::GroupRunner(const FusedElementwise& f, const void* const* ins, char* const* whole_outs)
    : f_(f), n_(numel(f.shape())) {
  const int n_in = static_cast<int>(f.in_avals().size());
  const std::vector<FusedStep>& steps = f.steps();
  const int n_slots = n_in + static_cast<int>(steps.size());
  kinds_.resize(n_slots);
  dtypes_.resize(n_slots);
  for (int i = 0; i < n_in; ++i) dtypes_[i] = f.in_avals()[i].dtype;
  for (size_t k = 0; k < steps.size(); ++k) dtypes_[n_in + k] = steps[k].aval.dtype;
  for (int i = 0; i < n_slots; ++i) kinds_[i] = kind_of(dtypes_[i]);
  out_of_.assign(n_slots, -1);
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    out_of_[f.outputs()[o]] = static_cast<int>(o);
    out_width_.push_back(dtype_size(dtypes_[f.outputs()[o]]));
  }
  ins_.resize(n_in);
  in_data_.resize(n_in);
  for (int i = 0; i < n_in; ++i) {
    Input& in = ins_[i];
    in.data = static_cast<const char*>(ins[i]);
    in.dtype = dtypes_[i];
    in.width = dtype_size(in.dtype);
    in.read = f.reads()[i];
    in.scalar = f.scalar_input(i);
    in.broadcast = f.broadcast_input(i);
    in.aliased = false;
    for (size_t o = 0; o < f.outputs().size(); ++o) {
      in.aliased = in.aliased || whole_outs[o] == in.data;
    }
    in_data_[i] = ins[i];
  }
  compiled_ = codegen_wanted(n_) ? compiled_group(f) : nullptr;
}

GroupRunner::~GroupRunner() = default;

// Elements [begin, end) through the tile interpreter; begin is a multiple of 16.
void GroupRunner::interpret(int64_t begin, int64_t end, char* const* at, int64_t at_elem) const {
  if (begin >= end) return;
  const std::vector<FusedStep>& steps = f_.steps();
  const int n_in = static_cast<int>(ins_.size());
  const int n_slots = static_cast<int>(kinds_.size());
  // Slot stride in doubles (8 bytes per element fits every kind), 64-byte aligned.
  const int64_t stride = std::min(kTile, (end - begin + 7) / 8 * 8);
  Scratch scratch(static_cast<size_t>(n_slots) * stride);
  auto tile = [&](int slot) { return static_cast<void*>(scratch.data() + slot * stride); };
  absl::InlinedVector<void*, 32> ptr(n_slots);
  for (int i = 0; i < n_in; ++i) {
    if (ins_[i].scalar) fill_scalar(ins_[i].dtype, ins_[i].data, tile(i), stride);
  }
  for (int64_t s = begin; s < end; s += kTile) {
    const int64_t len = std::min(kTile, end - s);
    for (int i = 0; i < n_in; ++i) {
      const Input& in = ins_[i];
      const char* src = in.data + s * in.width;
      if (in.scalar) {
        ptr[i] = tile(i);
      } else if (in.broadcast) {
        load_broadcast(in, s, len, tile(i));
        ptr[i] = tile(i);
      } else if (is_half(in.dtype)) {
        load(in.dtype, src, tile(i), len);
        ptr[i] = tile(i);
      } else if (in.aliased) {
        std::memcpy(tile(i), src, static_cast<size_t>(len * in.width));
        ptr[i] = tile(i);
      } else {
        ptr[i] = const_cast<char*>(src);
      }
    }
    for (size_t k = 0; k < steps.size(); ++k) {
      const int slot = n_in + static_cast<int>(k);
      const DType d = dtypes_[slot];
      const int o = out_of_[slot];
      char* out = o >= 0 ? at[o] + (s - at_elem) * out_width_[o] : nullptr;
      void* dst = o >= 0 && !is_half(d) ? static_cast<void*>(out) : tile(slot);
      run_step(steps[k], kinds_.data(), ptr.data(), dst, kinds_[slot], len);
      if (rounds_to_half(steps[k].prim->id(), dtypes_[steps[k].args[0]], d)) {
        if (d == DType::kF16) round_as<f16>(static_cast<float*>(dst), len);
        if (d == DType::kBF16) round_through_bf16(static_cast<float*>(dst), len);
      }
      ptr[slot] = dst;
      if (o >= 0 && is_half(d)) {
        const float* v = static_cast<const float*>(dst);
        if (d == DType::kF16) {
          convert(v, reinterpret_cast<f16*>(out), len);
        } else {
          round_to_bf16(v, reinterpret_cast<bf16*>(out), len);
        }
      }
    }
  }
}

void GroupRunner::run(int64_t begin, int64_t end, char* const* at) const {
  if (begin >= end) return;
  // A compiled loop takes whole blocks counted from the array's start; the interpreter takes
  // what is before the first and after the last.
  if (compiled_ != nullptr) {
    const int64_t block = compiled_->block;
    const int64_t first = std::min(end, (begin + block - 1) / block * block);
    const int64_t last = std::max(first, end / block * block);
    if (first < last) {
      interpret(begin, first, at, begin);
      // The loop indexes outputs from element 0: hand it each output's address of element 0
      // (only elements [first, last) are written through it).
      absl::InlinedVector<void*, 8> base(at, at + out_width_.size());
      for (size_t o = 0; o < base.size(); ++o) {
        base[o] = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(at[o]) -
                                          static_cast<uintptr_t>(begin * out_width_[o]));
      }
      compiled_->loop(in_data_.data(), base.data(), first, last);
      interpret(last, end, at, begin);
      return;
    }
  }
  interpret(begin, end, at, begin);
}

}  // namespace fusion

namespace {

// Runs f.steps(), never the body through the executor: run_body would plan body 0 into the
// backend-data slot that holds the compiled loop (compiled_group).
void fused_kernel(Call& c) {
  const auto& f = c.params<FusedElementwise>();
  const int n_in = c.num_inputs();
  const int64_t n = numel(f.shape());
  // Output buffers (allocated here: out_raw is not thread-safe).
  absl::InlinedVector<char*, 8> outs;
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    outs.push_back(static_cast<char*>(c.out_raw(static_cast<int>(o))));
  }
  if (n == 0) return;
  absl::InlinedVector<const void*, 16> ins(n_in);
  for (int i = 0; i < n_in; ++i) ins[i] = c.in_raw(i);
  const fusion::GroupRunner runner(f, ins.data(), outs.data());
  const int64_t tiles = (n + kTile - 1) / kTile;
  auto run_tiles = [&](int64_t first, int64_t last) {
    const int64_t begin = first * kTile, end = std::min(n, last * kTile);
    absl::InlinedVector<char*, 8> at(outs.size());
    for (size_t o = 0; o < outs.size(); ++o) at[o] = outs[o] + begin * runner.out_width(o);
    runner.run(begin, end, at.data());
  };
  if (tiles <= kGrainTiles) {
    run_tiles(0, tiles);  // small: no thread pool, no std::function
  } else {
    parallel_for(tiles, kGrainTiles, run_tiles);
  }
}

}  // namespace

void register_fused_reduce_kernel(KernelTable& table);  // fused_reduce_kernel.cc

void register_fusion_kernels(KernelTable& table) {
  table[static_cast<int>(P::kFusedElementwise)] = &fused_kernel;
  register_fused_reduce_kernel(table);
}

}  // namespace graft::cpu
