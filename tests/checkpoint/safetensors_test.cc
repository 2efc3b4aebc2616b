// The safetensors reader on a file written by the Python `safetensors` package
// (tools/make_safetensors_testdata.py; expected values are that script's formulas), and the
// writer's output read back.
#include "checkpoint/safetensors.h"

#include <gtest/gtest.h>

#include <complex>

#include "core/array.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

template <typename T>
std::vector<T> read_as(const SafetensorsReader& r, const std::string& name, DType dtype,
                       const Shape& shape) {
  const TensorInfo* t = r.header().find(name);
  EXPECT_NE(t, nullptr) << name;
  if (!t) return {};
  EXPECT_EQ(t->dtype, dtype) << name;
  EXPECT_EQ(t->shape, shape) << name;
  std::vector<T> out((t->end - t->begin) / sizeof(T));
  EXPECT_TRUE(r.read(*t, out.data()).ok());
  return out;
}

TEST(Safetensors, ReadsAFileWrittenByPython) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  ASSERT_TRUE(srcdir && ws);
  auto r = SafetensorsReader::open(std::string(srcdir) + "/" + ws +
                                   "/tests/checkpoint/testdata/from_python.safetensors");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->header().metadata.at("format"), "pt");
  EXPECT_EQ(r->header().tensors.size(), 8u);

  auto e = read_as<float>(*r, "model.embed_tokens.weight", DType::kF32, {3, 4});
  for (int i = 0; i < 12; ++i) EXPECT_EQ(e[i], i * 0.5f - 3) << i;
  auto up = read_as<bf16>(*r, "model.layers.0.mlp.up_proj.weight", DType::kBF16, {2, 3});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<float>(up[i]), i - 2.f) << i;
  auto h = read_as<f16>(*r, "h", DType::kF16, {4});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<float>(h[i]), i * 0.25f) << i;
  auto d = read_as<double>(*r, "d", DType::kF64, {3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(d[i], i / 3.0) << i;
  auto ids = read_as<int64_t>(*r, "ids", DType::kI64, {5});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ids[i], i * 3 - 7) << i;
  EXPECT_EQ(read_as<int32_t>(*r, "n", DType::kI32, {}), std::vector<int32_t>{-5});
  EXPECT_EQ(read_as<uint8_t>(*r, "b", DType::kBool, {3}), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(read_as<uint8_t>(*r, "u", DType::kU8, {4}), (std::vector<uint8_t>{0, 60, 120, 180}));
}

TEST(Safetensors, WriterOutputReadsBack) {
  std::string path = testing::fresh_dir("writer") + "/t.safetensors";
  std::vector<double> a = {1.5, -2, 3};
  std::vector<uint32_t> b = {7, 8};
  ASSERT_TRUE(write_safetensors(
                  path, {{"a", DType::kF64, {3}, a.data()}, {"x.b", DType::kU32, {2, 1}, b.data()}},
                  {{"k", "v"}})
                  .ok());
  auto r = SafetensorsReader::open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->header().data_start % 8, 0u);  // padded like the Python writer
  EXPECT_EQ(r->header().metadata.at("k"), "v");
  EXPECT_EQ(read_as<double>(*r, "a", DType::kF64, {3}), a);
  EXPECT_EQ(read_as<uint32_t>(*r, "x.b", DType::kU32, {2, 1}), b);
  // The writer refuses what the reader would refuse.
  EXPECT_EQ(write_safetensors(path, {{"../a", DType::kF64, {3}, a.data()}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(write_safetensors(
                path, {{"a", DType::kF64, {3}, a.data()}, {"a", DType::kF64, {3}, a.data()}})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SafetensorsReader::open(path + ".missing").status().code(),
            absl::StatusCode::kNotFound);
}

// complex + fft: c64 is safetensors' C64 and reads back; safetensors has no
// complex128, so writing one is refused with a Status (nothing written).
TEST(Safetensors, Complex64ReadsBackAndComplex128IsRefused) {
  std::string path = testing::fresh_dir("complex") + "/t.safetensors";
  std::vector<std::complex<float>> z = {{1, -2}, {0.5f, 3}};
  ASSERT_TRUE(write_safetensors(path, {{"z", DType::kC64, {2}, z.data()}}).ok());
  auto r = SafetensorsReader::open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(read_as<std::complex<float>>(*r, "z", DType::kC64, {2}), z);
  std::vector<std::complex<double>> w = {{1, 2}};
  absl::Status s = write_safetensors(path + "2", {{"w", DType::kC128, {1}, w.data()}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("c128"), std::string::npos) << s;
}

}  // namespace
}  // namespace graft::checkpoint
