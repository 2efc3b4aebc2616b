// Shapes whose element count or byte size overflows int64 are a graft::Error at the op that
// makes them; an allocation that fails is an AllocError naming the bytes; negative counts
// and dims are errors.
#include <cstdint>
#include <limits>
#include <string>

#include "core/buffer.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The message of the graft::Error that f throws ("" if it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// f throws a graft::Error whose message starts with `prefix` and contains `part`.
template <typename F>
void expect_error(F f, const std::string& prefix, const std::string& part) {
  std::string msg = error_of(f);
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: \"" << msg << "\"";
  EXPECT_NE(msg.find(part), std::string::npos) << "message: \"" << msg << "\"";
}

const std::string kElems = "has more elements than int64 holds";
const std::string kBytes = "has more bytes than int64 holds";

// A lazy f32 array of `shape` (a broadcast scalar: nothing is allocated until evaluated).
Array lazy(const Shape& shape, DType dtype = DType::kF32) {
  return broadcast_to(scalar(1.0, dtype), shape);
}

TEST(OverflowTest, CreationOpsRejectElementCountsBeyondInt64) {
  // (2^62 + 1) * 4 wrapped to 4 before; 2^32 * 2^32 wrapped to 0 (so sum gave 0).
  EXPECT_EQ(error_of([] {
              ones({(int64_t{1} << 62) + 1, 4});
            }),
            "[ones] shape (4611686018427387905, 4) " + kElems);
  expect_error([] { sum(ones({int64_t{1} << 32, int64_t{1} << 32})); }, "[ones] ", kElems);
  expect_error([] { zeros({kMax, 2}); }, "[zeros] ", kElems);
  expect_error([] { full({3, kMax, 3}, 2.0); }, "[full] ", kElems);
  expect_error([] { eye(int64_t{1} << 32); }, "[eye] ", kElems);
  expect_error([] { iota(DType::kI32, {int64_t{1} << 40, int64_t{1} << 40}); }, "[iota] ", kElems);
  expect_error([] { arange(0, 1e300); }, "[arange] ", "more elements than int64 holds");
  // NumPy's rule: a zero dim does not make the other dims' product acceptable.
  expect_error([] { ones({0, int64_t{1} << 62, int64_t{1} << 62}); }, "[ones] ", kElems);
  EXPECT_EQ(ones({0, int64_t{1} << 60}).size(), 0);  // its bytes too count the nonzero dims
}

TEST(OverflowTest, ByteSizesBeyondInt64AreErrors) {
  // 2^62 f32 elements fit in int64, their 2^64 bytes do not.
  EXPECT_EQ(error_of([] { ones({int64_t{1} << 62}); }),
            "[ones] shape (4611686018427387904,) of f32 " + kBytes);
  expect_error([] { zeros({int64_t{1} << 61}, DType::kF64); }, "[zeros] ", kBytes);
  expect_error([] { lazy({int64_t{1} << 62}); }, "[broadcast_to] ", kBytes);
  // The same count of u8 is fine (lazily: nothing allocated).
  EXPECT_EQ(lazy({int64_t{1} << 62}, DType::kU8).size(), int64_t{1} << 62);
}

TEST(OverflowTest, NegativeDimsAreErrors) {
  expect_error([] { ones({2, -1}); }, "[ones] ", "negative dimension");
  expect_error([] { zeros({-3}); }, "[zeros] ", "negative dimension");
  expect_error([] { eye(-1); }, "[eye] ", "negative dimension");
  expect_error([] { iota(DType::kI32, {-2}); }, "[iota] ", "negative dimension");
  expect_error(
      [] {
        broadcast_to(scalar(1.0, DType::kF32), {4, -4});
      },
      "[broadcast_to] ", "negative dimension");
  expect_error([] { reshape(ones({4}), {-2, -2}); }, "[reshape] ", "negative dimension");
  expect_error([] { array<float>({1, 2}, Shape{-1, -2}); }, "[array] ", "negative dimension");
}

TEST(OverflowTest, ShapeOpsRejectOverflowingResults) {
  Array x = ones({4});
  expect_error(
      [&] {
        broadcast_to(x, {int64_t{1} << 32, int64_t{1} << 32, 4});
      },
      "[broadcast_to] ", kElems);
  // The known dims' product overflowed (signed overflow: undefined) before the -1 was inferred.
  expect_error([&] { reshape(x, {-1, int64_t{1} << 62, 8}); }, "[reshape] ", kElems);
  expect_error([&] { reshape(x, {int64_t{1} << 32, int64_t{1} << 32}); }, "[reshape] ", kElems);
  expect_error([&] { tile(x, {int64_t{1} << 62}); }, "[tile] ", "overflows int64");
  expect_error([&] { tile(x, {int64_t{1} << 60}); }, "[tile] ", kBytes);
  expect_error([&] { repeat(x, int64_t{1} << 62); }, "[repeat] ", "overflows int64");
  expect_error(
      [&] {
        lax_pad(x, scalar(0.0, DType::kF32), {{0, 0, kMax / 2}});
      },
      "[pad] ", "overflows int64");
  expect_error([&] { pad(x, {{kMax, 1}}); }, "[pad] ", "overflows int64");
  expect_error(
      [&] {
        expand_dims(lazy({int64_t{1} << 40}), {0}) * lazy({int64_t{1} << 40, 1});
      },
      "[multiply] ", kElems);
  // Two halves of 2^62 u8 each: their concatenation has 2^63 elements.
  Array half = lazy({int64_t{1} << 62}, DType::kU8);
  expect_error([&] { concatenate({half, half}); }, "[concatenate] ", "overflows int64");
  Array f = lazy({int64_t{1} << 60});  // 2^60 + 2^60 f32 elements fit; 2^63 bytes do not
  expect_error([&] { concatenate({f, f}); }, "[concatenate] ", kBytes);
}

TEST(OverflowTest, ProductsOfDimsAreCheckedInLinalgAndBroadcasting) {
  Array col = lazy({int64_t{1} << 32, 1}), row = lazy({1, int64_t{1} << 32});
  expect_error([&] { col* row; }, "[multiply] ", kElems);  // an outer product by broadcasting
  expect_error([&] { add(col, row); }, "[add] ", kElems);
  expect_error([&] { matmul(col, row); }, "[matmul] ", kElems);
  Array v = lazy({int64_t{1} << 32});
  expect_error([&] { outer(v, v); }, "[outer] ", kElems);
  expect_error([&] { dot(col, row); }, "[dot] ", kElems);
  expect_error([&] { dot_general(col, row, DotDims{{1}, {0}, {}, {}}); }, "[dot_general] ", kElems);
  // Within the limits: a (2^20, 1) @ (1, 2^20) matmul has a valid lazy (2^20, 2^20) result.
  Array m = matmul(lazy({int64_t{1} << 20, 1}), lazy({1, int64_t{1} << 20}));
  EXPECT_EQ(m.shape(), (Shape{int64_t{1} << 20, int64_t{1} << 20}));
  expect_error([] { one_hot(lazy({int64_t{1} << 40}, DType::kI32), int64_t{1} << 40); },
               "[one_hot] ", kElems);
}

TEST(OverflowTest, TracedShapesAreCheckedUnderVmapAndJit) {
  // Per example (2^29, 2^31) = 2^60 elements, fine; batched 16 times it is 2^64.
  auto f = [](const Array& x) { return broadcast_to(x, {int64_t{1} << 29, int64_t{1} << 31}); };
  EXPECT_EQ(f(scalar(1.0, DType::kF32)).size(), int64_t{1} << 60);
  std::string msg = error_of([&] { vmap(f)(zeros({16})); });
  EXPECT_EQ(msg.rfind("[broadcast_in_dim] ", 0), 0u) << msg;
  EXPECT_NE(msg.find(kElems), std::string::npos) << msg;

  auto g = jit([](const Array& x) { return sum(x * lazy({int64_t{1} << 32, int64_t{1} << 32})); });
  expect_error([&] { g(ones({1})); }, "[broadcast_to] ", kElems);
}

TEST(OverflowTest, SliceStepsOfAnySizeDoNotOverflow) {
  Array x = array<float>({1, 2, 3, 4, 5});
  // (e - b + step - 1) / step overflowed for a step near int64's limits.
  EXPECT_EQ(slice_axis(x, 0, std::nullopt, std::nullopt, kMax).to_vector<float>(),
            (std::vector<float>{1}));
  EXPECT_EQ(slice_axis(x, 0, std::nullopt, std::nullopt, std::numeric_limits<int64_t>::min())
                .to_vector<float>(),
            (std::vector<float>{5}));
  EXPECT_EQ(slice_axis(x, 0, 1, std::nullopt, 2).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(slice_axis(x, 0, 3, std::nullopt, -2).to_vector<float>(), (std::vector<float>{4, 2}));
  EXPECT_EQ(slice(x, {1}, {5}, {kMax}).to_vector<float>(), (std::vector<float>{2}));
  EXPECT_EQ(slice(x, {0}, {5}, {3}).to_vector<float>(), (std::vector<float>{1, 4}));
}

// 2^48 f32 = 1 PiB: a valid shape, but more than x86-64's 128 TiB user address space, so
// the allocation fails whatever the overcommit mode (a 4 TiB one succeeds under
// vm.overcommit_memory=1 and would then be filled). Under ASan it needs
// allocator_may_return_null=1 (.bazelrc's asan config), else ASan aborts on it.
constexpr int64_t kPiBFloats = int64_t{1} << 48;

TEST(OverflowTest, FailedAllocationsAreErrorsNamingTheBytes) {
  try {
    ones({kPiBFloats});
    ADD_FAILURE() << "no error";
  } catch (const AllocError& e) {
    EXPECT_EQ(e.bytes(), size_t{1} << 50);
    EXPECT_EQ(std::string(e.what()),
              "[alloc] cannot allocate 1125899906842624 bytes (1.0 PiB) for ones "
              "f32[281474976710656]: out of memory");
  }
  // The kernel that asked is named when an evaluation fails.
  Array y = exp(lazy({kPiBFloats}));
  std::string msg = error_of([&] { eval(y); });
  EXPECT_EQ(msg.rfind("[alloc] cannot allocate 1125899906842624 bytes (1.0 PiB) for the output "
                      "f32[281474976710656] of ",
                      0),
            0u)
      << msg;
  // An AllocError is a graft::Error; a request beyond 2^62 bytes fails without rounding wrap.
  expect_error([] { Buffer::make(std::numeric_limits<size_t>::max()); }, "[alloc] ", "bytes");
  expect_error([] { Buffer::make(size_t{1} << 50, "a test"); }, "[alloc] ", "for a test");
  // Memory is usable afterwards (the failed path emptied the cache and kept no state).
  EXPECT_EQ(sum(ones({1000})).item<float>(), 1000.0f);
}

TEST(OverflowTest, ByteCountsAreReadable) {
  EXPECT_EQ(bytes_str(512), "512 B");
  EXPECT_EQ(bytes_str(1536), "1.5 KiB");
  EXPECT_EQ(bytes_str(4398046511104.0), "4.0 TiB");
}

TEST(OverflowTest, RandomCountsAndShapesAreChecked) {
  Array key = random::key(0);
  EXPECT_EQ(error_of([&] { random::permutation(key, -4); }),
            "[permutation] n must be non-negative, got -4");
  EXPECT_EQ(random::permutation(key, 0).size(), 0);
  EXPECT_EQ(random::permutation(key, 5).shape(), Shape{5});
  expect_error([&] { random::split(key, -1); }, "[split] ", "non-negative");
  expect_error([&] { random::split(key, Shape{2, -1}); }, "[split] ", "negative dimension");
  expect_error([&] { random::uniform(key, {-1}); }, "[uniform] ", "negative dimension");
  expect_error([&] { random::normal(key, {3, -2}); }, "[normal] ", "negative dimension");
  expect_error([&] { random::randint(key, {-5}, 0, 10); }, "[randint] ", "negative dimension");
  expect_error([&] { random::bits(key, {-1}); }, "[bits] ", "negative dimension");
  expect_error([&] { random::bernoulli(key, 0.5, {-1}); }, "[bernoulli] ", "negative dimension");
  expect_error([&] { random::gumbel(key, {-1}); }, "[gumbel] ", "negative dimension");
  expect_error([&] { random::categorical(key, zeros({3}), -1, Shape{-2}); }, "[categorical] ",
               "negative dimension");
  // The counters' count wrapped around for these before.
  expect_error(
      [&] {
        random::uniform(key, {int64_t{1} << 32, int64_t{1} << 32});
      },
      "[uniform] ", kElems);
  expect_error([&] { random::split(key, Shape{int64_t{1} << 62, 4}); }, "[split] ", kElems);
  expect_error([&] { random::bits(key, {kMax, 2}); }, "[bits] ", kElems);
}

}  // namespace
}  // namespace graft
