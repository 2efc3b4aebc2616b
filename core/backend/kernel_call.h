// What a kernel sees of the instruction it runs, shared by the backends' kernel tables
// (core/backend/cpu/kernel.h, core/backend/cuda/kernel.h): its primitive (with parameters),
// its input buffers with their avals, the output avals, and the output slots it must fill.
// Each backend's Call adds how outputs are allocated (out_raw) and what else its kernels need
// (the CPU's in-place reuse; a GPU's device and stream). The executor builds one per
// instruction over its table of buffers; the pointers stay valid for the kernel's run.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "core/ir/primitive.h"

namespace graft {

class KernelCall {
 public:
  // `outputs`: one (null) slot per output, num_outputs of them (out_avals holds as many).
  KernelCall(const Primitive& p, std::shared_ptr<Buffer>* const* inputs,
             const Aval* const* in_avals, int num_inputs, const Aval* const* out_avals,
             std::shared_ptr<Buffer>* outputs, int num_outputs)
      : prim(p),
        inputs_(inputs),
        in_avals_(in_avals),
        out_avals_(out_avals),
        num_inputs_(num_inputs),
        num_outputs_(num_outputs),
        outputs_(outputs) {}

  const Primitive& prim;
  template <typename P>
  const P& params() const {
    return static_cast<const P&>(prim);
  }

  int num_inputs() const { return num_inputs_; }
  const Aval& in_aval(int i) const { return *in_avals_[i]; }
  const Aval& out_aval(int i = 0) const { return *out_avals_[i]; }
  const std::shared_ptr<Buffer>& in_buffer(int i) const { return *inputs_[i]; }
  // Input i as an (evaluated) array, for kernels that run programs or format values.
  Array input(int i) const {
    const Aval& a = in_aval(i);
    return Array::from_buffer(in_buffer(i), a.shape, a.dtype, a.weak);
  }
  // Every input as an array (debug_print formats them, pure_callback hands them over).
  std::vector<Array> input_arrays() const {
    std::vector<Array> ins;
    for (int i = 0; i < num_inputs_; ++i) ins.push_back(input(i));
    return ins;
  }
  // Input i's bytes (in the backend's memory).
  const void* in_raw(int i) const { return (*inputs_[i])->data(); }
  template <typename T>
  const T* in(int i) const {
    return static_cast<const T*>(in_raw(i));
  }
  int num_outputs() const { return num_outputs_; }
  bool has_output(int o) const { return outputs_[o] != nullptr; }
  // Output o's buffer once the kernel has allocated or set it (null before).
  const std::shared_ptr<Buffer>& out_buffer(int o) const { return outputs_[o]; }
  // Output `o` is `buffer` (computed elsewhere, e.g. by a body's program).
  void set_output(int o, std::shared_ptr<Buffer> buffer) { outputs_[o] = std::move(buffer); }
  // Output `o` shares input `i`'s buffer (same bytes; e.g. reshape).
  void alias(int o, int i) { outputs_[o] = *inputs_[i]; }

 protected:
  std::shared_ptr<Buffer>* const* inputs_;
  const Aval* const* in_avals_;
  const Aval* const* out_avals_;
  int num_inputs_;
  int num_outputs_;
  std::shared_ptr<Buffer>* outputs_;
};

}  // namespace graft
