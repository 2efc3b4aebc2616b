// Array: an immutable value handle over a shared graph node.
//
// A node is one application of a primitive to input arrays, with one or more outputs, or a
// leaf (a constant holding a buffer, or a tracer placeholder). Ops only build nodes; eval()
// computes them. An evaluated node holds its output buffers and drops its inputs, so the
// graph does not pin memory. Arrays are cheap to copy (a shared_ptr and an index).
//
// Threads: any number of threads may build graphs over shared arrays and evaluate or read
// them at the same time, evaluated or not. A node shared by several threads is computed once:
// the first thread to reach it runs its kernel while holding the node's mutex, the others
// wait for it and then read the same buffers. What is not allowed is what is not allowed
// with one thread either (reading a donated array); a jit-compiled function may be called
// from several threads at once (its cache is locked).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/buffer.h"
#include "core/dtype/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace graft {

// The abstract value of an array: what is known without computing it.
struct Aval {
  Shape shape;
  DType dtype = DType::kF32;
  bool weak = false;  // weakly typed (came from a C++ scalar); see promote_types
  // The named mapped axes it varies over (core/sharding/axis.h); 0 outside pmap / shard_map / named
  // vmap.
  uint64_t vma = 0;
  bool operator==(const Aval& o) const {
    return shape == o.shape && dtype == o.dtype && weak == o.weak && vma == o.vma;
  }
  std::string str() const;  // "f32[2,3]", "f32[2,3]{i}" when varying over axis i
};

class Primitive;
class Array;
class NamedSharding;
struct Shard;
struct Device;

struct Node {
  std::shared_ptr<const Primitive> primitive;    // null for leaves
  std::vector<Array> inputs;                     // cleared once evaluated
  std::vector<Aval> avals;                       // one per output
  std::vector<std::shared_ptr<Buffer>> buffers;  // one per output once evaluated
  bool tracer = false;  // depends on a placeholder: has no value, only a graph
  // Where a leaf lives (device_put, jit's out_shardings); null: unsharded, on device 0.
  std::shared_ptr<const NamedSharding> sharding;

  Node() = default;
  // Whether `buffers` holds the outputs. Acquire: a thread that sees true also sees them.
  bool evaluated() const { return ready_.load(std::memory_order_acquire); }
  // Stores the outputs and marks the node evaluated (release). Leaves' constructors and the
  // kernel runner call it; a kernel runner holds `eval_mu` (eval.cc).
  void set_buffers(std::vector<std::shared_ptr<Buffer>> outputs);
  // Donation: the buffers are given away; the node becomes a leaf without a value.
  void drop_buffers();
  // Given to a jitted function through donate_argnums (a leaf that is neither evaluated nor a
  // tracer): its buffer may have been overwritten, so reading it or passing it to an op is an
  // error.
  bool donated() const { return primitive == nullptr && !tracer && !evaluated(); }
  // Copies `inputs` (taken under `eval_mu`) into *out and returns true, or returns false when
  // the node is evaluated: how a graph walk reads a node that another thread may be
  // evaluating (and so clearing the inputs of) at the same time.
  bool pending_inputs(std::vector<Array>* out);
  // Held while this node's kernel runs, so threads sharing the node compute it once.
  std::mutex eval_mu;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();  // iterative: destroying a chain of a million nodes does not recurse

 private:
  std::atomic<bool> ready_{false};
};

class Array {
 public:
  Array() = default;  // an empty handle; most calls on it throw graft::Error
  // C++ numbers become weakly typed scalars (x * 2.0 keeps x's bf16). bool is strong.
  Array(double v);   // NOLINT(runtime/explicit): weak f64 (full precision; see promote_types)
  Array(float v);    // NOLINT: weak f32
  Array(int v);      // NOLINT: weak i32
  Array(int64_t v);  // NOLINT: weak i32 if it fits, else weak i64
  Array(bool v);     // NOLINT: bool

  Array(std::shared_ptr<Node> node, uint32_t index) : node_(std::move(node)), index_(index) {}

  // A leaf holding `buffer` (which must hold numel(shape) elements of dtype).
  static Array from_buffer(std::shared_ptr<Buffer> buffer, Shape shape, DType dtype,
                           bool weak = false);
  // A tracer leaf: has an aval but no value. Transforms trace user functions on these.
  static Array placeholder(Aval aval);

  bool valid() const { return node_ != nullptr; }
  const Aval& aval() const;
  const Shape& shape() const { return aval().shape; }
  DType dtype() const { return aval().dtype; }
  bool weak_type() const { return aval().weak; }
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t size() const { return numel(shape()); }
  int64_t dim(int axis) const;  // negative axes count from the end
  int64_t nbytes() const { return size() * dtype_size(dtype()); }

  bool is_evaluated() const;
  bool is_tracer() const;

  // Placement (core/sharding/device_put.h, which callers include): the sharding it was placed with
  // (device_put, jit's out_shardings), else SingleDevice(cpu:0); its devices; and the block
  // of each device of this process (evaluates).
  NamedSharding sharding() const;
  std::vector<Device> devices() const;
  std::vector<Shard> addressable_shards() const;

  // Reading data evaluates first. Elements are converted to T as static_cast would (f16
  // and bf16 through float). Tracers cannot be read: graft::Error.
  template <typename T>
  T item() const;
  template <typename T>
  std::vector<T> to_vector() const;
  std::shared_ptr<Buffer> buffer() const;  // evaluates; dense row-major, where it lives
  // Evaluates; the values in host memory: buffer() itself, or a copy of an array that lives
  // on a GPU (device_put to a cuda device).
  std::shared_ptr<const Buffer> host_buffer() const;
  // buffer()'s bytes; graft::Error "[raw_data] ..." for an array in device memory (read it
  // with host_buffer, to_vector or item).
  const void* raw_data() const;

  // Graph access, for transforms and backends.
  const std::shared_ptr<Node>& node() const { return node_; }
  uint32_t output_index() const { return index_; }
  const Primitive* primitive() const;  // null for leaves
  const std::vector<Array>& inputs() const;
  bool same(const Array& o) const { return node_ == o.node_ && index_ == o.index_; }

 private:
  void require(const char* what) const;
  std::shared_ptr<Node> node_;
  uint32_t index_ = 0;
};

// Throws the error for using an array donated to a jitted function.
[[noreturn]] void fail_donated();

namespace detail {
// graft::Error "[op] got an empty Array handle" for a default-constructed handle.
void check_valid(std::string_view op, const Array& x);
}  // namespace detail

// Computes all given arrays (sharing work between them).
void eval(const std::vector<Array>& arrays);
template <typename... A>
void eval(const Array& first, const A&... rest) {
  eval(std::vector<Array>{first, rest...});
}

// NumPy-like printing: values, then shape and dtype. Evaluates.
std::ostream& operator<<(std::ostream& os, const Array& a);
std::string to_string(const Array& a);

// ---- implementation of the templates ----

namespace detail {
// Converts `n` elements of dtype `src` at `data` to T.
template <typename T>
void convert_to(const void* data, DType src, int64_t n, T* out);
}  // namespace detail

template <typename T>
std::vector<T> Array::to_vector() const {
  auto buf = host_buffer();
  std::vector<T> out(size());
  detail::convert_to<T>(buf->data(), dtype(), size(), out.data());
  return out;
}

template <typename T>
T Array::item() const {
  if (size() != 1) {
    fail("item", "needs an array of one element, got shape ", shape_str(shape()));
  }
  auto buf = host_buffer();
  T out;
  detail::convert_to<T>(buf->data(), dtype(), 1, &out);
  return out;
}

}  // namespace graft
