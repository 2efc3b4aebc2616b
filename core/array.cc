#include "core/array.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/sharding/axis.h"
#include "core/dtype/convert.h"
#include "core/device/runtime.h"

namespace graft {

std::string Aval::str() const {
  return absl::StrCat(dtype_name(dtype), "[", absl::StrJoin(shape, ","), "]", weak ? "{weak}" : "",
                      vma_str(vma));
}

Node::~Node() {
  // Unlink the chain iteratively: take over the inputs of every node we hold the last
  // reference to before letting it go, so no destructor recurses.
  std::vector<Array> stack = std::move(inputs);
  while (!stack.empty()) {
    Array a = std::move(stack.back());
    stack.pop_back();
    const std::shared_ptr<Node>& n = a.node();
    if (n && n.use_count() == 1) {
      for (Array& in : n->inputs) stack.push_back(std::move(in));
      n->inputs.clear();
    }
  }
}

void Node::set_buffers(std::vector<std::shared_ptr<Buffer>> outputs) {
  buffers = std::move(outputs);
  ready_.store(true, std::memory_order_release);
}

void Node::drop_buffers() {
  std::lock_guard<std::mutex> lock(eval_mu);
  ready_.store(false, std::memory_order_release);
  buffers.clear();
  inputs.clear();
  primitive = nullptr;
}

bool Node::pending_inputs(std::vector<Array>* out) {
  if (evaluated()) return false;
  std::lock_guard<std::mutex> lock(eval_mu);
  if (evaluated()) return false;
  *out = inputs;
  return true;
}

namespace {

template <typename T>
Array scalar_leaf(T value, DType dtype, bool weak) {
  auto buf = Buffer::make(sizeof(T));
  *buf->as<T>() = value;
  return Array::from_buffer(std::move(buf), {}, dtype, weak);
}

}  // namespace

// A C++ double keeps its full precision (weak f64): combined with an f32 or bf16 array it
// takes that array's dtype, combined with an f64 array it loses nothing.
Array::Array(double v) : Array(scalar_leaf<double>(v, DType::kF64, true)) {}
Array::Array(float v) : Array(scalar_leaf<float>(v, DType::kF32, true)) {}
Array::Array(int v) : Array(scalar_leaf<int32_t>(v, DType::kI32, true)) {}
Array::Array(int64_t v)
    : Array(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()
                ? scalar_leaf<int32_t>(static_cast<int32_t>(v), DType::kI32, true)
                : scalar_leaf<int64_t>(v, DType::kI64, true)) {}
Array::Array(bool v) : Array(scalar_leaf<bool>(v, DType::kBool, false)) {}

Array Array::from_buffer(std::shared_ptr<Buffer> buffer, Shape shape, DType dtype, bool weak) {
  check_shape("array", shape, dtype);
  if (buffer == nullptr ||
      buffer->bytes() < static_cast<size_t>(numel(shape) * dtype_size(dtype))) {
    fail("array", "buffer too small for ", dtype_name(dtype), shape_str(shape));
  }
  auto node = std::make_shared<Node>();
  node->avals.push_back(Aval{std::move(shape), dtype, weak});
  node->set_buffers({std::move(buffer)});
  return Array(std::move(node), 0);
}

Array Array::placeholder(Aval aval) {
  check_shape("trace", aval.shape, aval.dtype);
  auto node = std::make_shared<Node>();
  node->avals.push_back(std::move(aval));
  node->tracer = true;
  return Array(std::move(node), 0);
}

void Array::require(const char* what) const {
  if (!node_) fail(what, "called on an empty Array handle");
}

const Aval& Array::aval() const {
  require("aval");
  return node_->avals[index_];
}

int64_t Array::dim(int axis) const { return shape()[normalize_axis("dim", axis, ndim())]; }

bool Array::is_evaluated() const {
  require("is_evaluated");
  return node_->evaluated();
}

bool Array::is_tracer() const {
  require("is_tracer");
  return node_->tracer;
}

const Primitive* Array::primitive() const {
  require("primitive");
  return node_->primitive.get();
}

const std::vector<Array>& Array::inputs() const {
  require("inputs");
  return node_->inputs;
}

void detail::check_valid(std::string_view op, const Array& x) {
  if (!x.valid()) fail(op, "got an empty Array handle");
}

void fail_donated() {
  fail("jit", "array was donated to a jitted function and can no longer be used");
}

std::shared_ptr<const Buffer> Array::host_buffer() const { return runtime("host_buffer").to_host(buffer()); }

const void* Array::raw_data() const {
  std::shared_ptr<Buffer> b = buffer();
  if (!b->on_host()) {
    fail("raw_data", "the array ", aval().str(), " lives in device memory (device ", b->device(),
         "): read it with host_buffer(), to_vector() or item()");
  }
  return b->data();
}

std::shared_ptr<Buffer> Array::buffer() const {
  require("buffer");
  if (node_->donated()) fail_donated();
  if (node_->tracer) {
    fail("read", "cannot read the value of a traced array ", aval().str(),
         ": its value is not known while tracing (inside jit, grad, vmap...). Branch on "
         "data with cond / switch and loop with while_loop / fori_loop instead of C++ if and "
         "for; if the value is a configuration, pass it as a plain C++ argument listed in "
         "jit's static_argnums; or compute it outside the traced function");
  }
  if (!node_->evaluated()) eval({*this});
  return node_->buffers[index_];
}

namespace detail {

// fp8 elements are read through f32 (exact). Complex elements read as a real T keep their real
// part, as bool are true where either part is nonzero (as convert_element_type does); real
// elements read as std::complex get a zero imaginary part.
template <typename T>
void convert_to(const void* data, DType src, int64_t n, T* out) {
  constexpr bool t_complex = std::is_same_v<T, std::complex<float>> ||
                             std::is_same_v<T, std::complex<double>>;
  if (is_complex(src)) {
    dispatch_complex(src, [&]<typename C>() {
      const C* in = static_cast<const C*>(data);
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (t_complex) {
          out[i] = T(in[i]);
        } else if constexpr (std::is_same_v<T, bool>) {
          out[i] = in[i] != C(0);
        } else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
          out[i] = T(static_cast<float>(in[i].real()));
        } else {
          out[i] = static_cast<T>(in[i].real());
        }
      }
    });
    return;
  }
  if constexpr (t_complex) {
    std::vector<double> re(n);
    convert_to<double>(data, src, n, re.data());
    for (int64_t i = 0; i < n; ++i) out[i] = T(static_cast<typename T::value_type>(re[i]));
    return;
  } else {
  dispatch_real_or_float8(src, [&]<typename S>() {
    const S* in = static_cast<const S*>(data);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<S, f16> || std::is_same_v<S, bf16> || kIsFloat8<S>) {
        float f = static_cast<float>(in[i]);
        if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
          out[i] = T(f);
        } else {
          out[i] = static_cast<T>(f);
        }
      } else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
        out[i] = T(static_cast<float>(in[i]));
      } else {
        out[i] = static_cast<T>(in[i]);
      }
    }
  });
  }
}

#define GRAFT_INSTANTIATE(T) template void convert_to<T>(const void*, DType, int64_t, T*);
GRAFT_INSTANTIATE(bool)
GRAFT_INSTANTIATE(uint8_t)
GRAFT_INSTANTIATE(uint16_t)
GRAFT_INSTANTIATE(uint64_t)
GRAFT_INSTANTIATE(int8_t)
GRAFT_INSTANTIATE(int16_t)
GRAFT_INSTANTIATE(uint32_t)
GRAFT_INSTANTIATE(int32_t)
GRAFT_INSTANTIATE(int64_t)
GRAFT_INSTANTIATE(f16)
GRAFT_INSTANTIATE(bf16)
GRAFT_INSTANTIATE(float)
GRAFT_INSTANTIATE(double)
GRAFT_INSTANTIATE(std::complex<float>)
GRAFT_INSTANTIATE(std::complex<double>)
#undef GRAFT_INSTANTIATE

}  // namespace detail

}  // namespace graft
