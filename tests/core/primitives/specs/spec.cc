#include "tests/core/primitives/specs/spec.h"

#include <random>

namespace graft::spec {

std::map<PrimitiveId, SpecFn>& registry() {
  static auto* r = new std::map<PrimitiveId, SpecFn>();
  return *r;
}

double round_to(double v, DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return v != 0 ? 1 : 0;
    case DType::kU8:
      return static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)));
    case DType::kU16:
      return static_cast<double>(static_cast<uint16_t>(static_cast<int64_t>(v)));
    case DType::kU64:
      return static_cast<double>(static_cast<uint64_t>(static_cast<int64_t>(v)));
    case DType::kI8:
      return static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)));
    case DType::kI16:
      return static_cast<double>(static_cast<int16_t>(static_cast<int64_t>(v)));
    case DType::kC64:
    case DType::kC128:
      break;
    case DType::kU32:
      return static_cast<double>(static_cast<uint32_t>(static_cast<int64_t>(v)));
    case DType::kI32:
      return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)));
    case DType::kI64:
      return static_cast<double>(static_cast<int64_t>(v));
    case DType::kF16:
      return static_cast<float>(f16(static_cast<float>(v)));
    case DType::kBF16:
      return static_cast<float>(bf16(static_cast<float>(v)));
    case DType::kF32:
      return static_cast<float>(v);
    case DType::kF64:
      return v;
    case DType::kF8E4M3FN:
      return static_cast<float>(f8_e4m3fn(v));
    case DType::kF8E5M2:
      return static_cast<float>(f8_e5m2(v));
  }
  return v;
}

std::vector<double> random_values(int64_t n, DType dtype, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::vector<double> out(n);
  for (auto& v : out) {
    if (dtype == DType::kBool) {
      v = static_cast<double>(gen() & 1u);
    } else if (is_integral(dtype)) {
      double l = is_unsigned(dtype) ? std::max(0.0, lo) : lo;
      int64_t span = std::max<int64_t>(1, static_cast<int64_t>(hi - l));
      v = l + static_cast<double>(gen() % span);
    } else {
      v = round_to(lo + (hi - lo) * std::uniform_real_distribution<double>(0, 1)(gen), dtype);
    }
  }
  return out;
}

Array make(const std::vector<double>& values, const Shape& shape, DType dtype) {
  return astype(array<double>(values, shape), dtype);
}

Array random_array(const Shape& shape, DType dtype, uint32_t seed, double lo, double hi) {
  return make(random_values(numel(shape), dtype, seed, lo, hi), shape, dtype);
}

std::vector<double> values_of(const Array& a) { return a.to_vector<double>(); }

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = shape[i] == 0 ? 0 : flat % shape[i];
    flat = shape[i] == 0 ? 0 : flat / shape[i];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + idx[i];
  return flat;
}

Expected ref_unary(const Array& x, DType out_dtype, const std::function<double(double)>& f) {
  Expected e{x.shape(), out_dtype, {}};
  for (double v : values_of(x)) e.values.push_back(round_to(f(v), out_dtype));
  return e;
}

Expected ref_binary(const Array& a, const Array& b, DType out_dtype,
                    const std::function<double(double, double)>& f) {
  Shape out = broadcast_shapes("ref_binary", a.shape(), b.shape());
  std::vector<double> va = values_of(a), vb = values_of(b);
  Expected e{out, out_dtype, {}};
  auto source = [&](const std::vector<int64_t>& idx, const Shape& s) {
    std::vector<int64_t> j(s.size());
    size_t off = out.size() - s.size();
    for (size_t k = 0; k < s.size(); ++k) j[k] = s[k] == 1 ? 0 : idx[off + k];
    return ravel(j, s);
  };
  for (int64_t i = 0; i < numel(out); ++i) {
    auto idx = unravel(i, out);
    e.values.push_back(
        round_to(f(va[source(idx, a.shape())], vb[source(idx, b.shape())]), out_dtype));
  }
  return e;
}

double default_rtol(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 2e-3;
    case DType::kBF16:
      return 1.6e-2;
    case DType::kF32:
      return 2e-6;
    case DType::kF64:
      return 1e-13;
    default:
      return 0;
  }
}

}  // namespace graft::spec
