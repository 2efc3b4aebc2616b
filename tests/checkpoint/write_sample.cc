// Writes step 1 of a checkpoint with one tensor per dtype whose element i is a formula of i
// (restated independently in tools/check_safetensors.py, which loads the file with the
// `safetensors` Python package). Usage: write_sample <dir>
#include <cstdio>

#include "checkpoint/manager.h"
#include "core/dtype/dtype.h"

using namespace graft;

namespace {

Array make(DType d, const Shape& shape, double (*f)(int64_t)) {
  int64_t n = numel(shape);
  auto buf = Buffer::make(static_cast<size_t>(n * dtype_size(d)));
  dispatch_dtype(d, [&]<typename T>() {
    T* p = static_cast<T*>(buf->data());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
        p[i] = T(static_cast<float>(f(i)));
      } else {
        p[i] = static_cast<T>(f(i));
      }
    }
  });
  return Array::from_buffer(buf, shape, d);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample <dir>\n");
    return 2;
  }
  std::map<std::string, Array> t;
  t["f32"] = make(DType::kF32, {2, 3}, [](int64_t i) { return i * 0.5 - 3; });
  t["f64"] = make(DType::kF64, {4}, [](int64_t i) { return i * 0.25 + 1e-3; });
  t["f16"] = make(DType::kF16, {3, 1}, [](int64_t i) { return i * 0.5 - 1; });
  t["bf16"] = make(DType::kBF16, {2, 2}, [](int64_t i) { return i * 1.5 - 2; });
  t["i32"] = make(DType::kI32, {5}, [](int64_t i) { return i * 3.0 - 7; });
  t["i64"] = make(DType::kI64, {}, [](int64_t) { return 1e10 + 7; });
  t["u8"] = make(DType::kU8, {6}, [](int64_t i) { return double(i * 47 % 256); });
  t["u32"] = make(DType::kU32, {2}, [](int64_t i) { return i * 4e9; });
  t["bool"] = make(DType::kBool, {4}, [](int64_t i) { return double(i % 3 == 0); });
  t["empty"] = make(DType::kF32, {0, 2}, [](int64_t) { return 0.0; });
  auto mgr = checkpoint::CheckpointManager::open(argv[1], {.enable_async = false});
  if (!mgr.ok()) return 1;
  absl::Status s = (*mgr)->save(1, {{"params", checkpoint::Item::tree(t)}});
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%s/1/params.safetensors\n", argv[1]);
  return 0;
}
