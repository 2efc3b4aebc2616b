// The integer dtypes i8, i16, u16, u64 against JAX 0.10.2: vectors recorded by
// tools/make_int_dtype_vectors.py (JAX with x64 on, where the file says otherwise the tool's
// docstring does) in tests/core/testdata/int_dtype_vectors.txt, and .npy files numpy wrote.
// Integers are compared exactly (read as decimal text: u64 values do not fit a double).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/numpy/npy_io.h"
#include "core/ops.h"
#include "core/primitives/elementwise.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "transforms/jit.h"

namespace graft {
namespace {

struct Rec {
  std::string dtype;
  Shape shape;
  std::vector<std::string> values;
};

std::string runfile(const std::string& path) {
  if (std::ifstream(path)) return path;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir ? std::string(srcdir) + "/graft/" + path : path;
}

const std::map<std::string, Rec>& recs() {
  static const auto* m = [] {
    auto* out = new std::map<std::string, Rec>;
    std::ifstream in(runfile("tests/core/testdata/int_dtype_vectors.txt"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string name, shape;
      Rec r;
      ls >> name >> r.dtype >> shape;
      if (shape != "scalar") {
        std::istringstream ss(shape);
        for (std::string d; std::getline(ss, d, ',');) r.shape.push_back(std::stoll(d));
      }
      for (std::string t; ls >> t;) r.values.push_back(t);
      (*out)[name] = std::move(r);
    }
    return out;
  }();
  return *m;
}

const Rec& rec(const std::string& name) {
  auto it = recs().find(name);
  if (it == recs().end()) {
    ADD_FAILURE() << "no recorded vector " << name;
    static const Rec empty;
    return empty;
  }
  return it->second;
}

// The table order of the tool's DTYPES.
const std::vector<DType> kTable = {
    DType::kBool, DType::kU8,  DType::kU16, DType::kU32, DType::kU64,
    DType::kI8,   DType::kI16, DType::kI32, DType::kI64, DType::kF16,
    DType::kBF16, DType::kF32, DType::kF64, DType::kC64, DType::kC128};
const std::vector<DType> kNew = {DType::kI8, DType::kI16, DType::kU16, DType::kU64};

DType dtype_named(const std::string& n) {
  for (DType d : kTable) {
    if (n == dtype_name(d)) return d;
  }
  ADD_FAILURE() << "unknown dtype " << n;
  return DType::kF32;
}

std::vector<int64_t> ints(const Rec& r) {
  std::vector<int64_t> v;
  for (const std::string& s : r.values) v.push_back(std::stoll(s));
  return v;
}

// The recorded values as an array of their dtype (integers exact).
Array make(const Rec& r) {
  DType d = dtype_named(r.dtype);
  if (d == DType::kU64) {
    std::vector<uint64_t> v;
    for (const std::string& s : r.values) v.push_back(std::stoull(s));
    return array(v, r.shape);
  }
  if (is_integral(d) || d == DType::kBool) return astype(array(ints(r), r.shape), d);
  std::vector<double> v;
  for (const std::string& s : r.values) v.push_back(std::strtod(s.c_str(), nullptr));
  return astype(array(v, r.shape), d);
}

// got has the recorded dtype, shape and values (integers exactly; floats with NaN == NaN).
void expect_rec(const Array& got, const std::string& name) {
  SCOPED_TRACE(name);
  const Rec& want = rec(name);
  ASSERT_EQ(dtype_name(got.dtype()), want.dtype);
  ASSERT_EQ(got.shape(), want.shape);
  std::vector<std::string> g;
  if (got.dtype() == DType::kU64) {
    for (uint64_t v : got.to_vector<uint64_t>()) g.push_back(std::to_string(v));
  } else if (is_integral(got.dtype()) || got.dtype() == DType::kBool) {
    for (int64_t v : got.to_vector<int64_t>()) g.push_back(std::to_string(v));
  } else {
    std::vector<double> v = got.to_vector<double>();
    ASSERT_EQ(v.size(), want.values.size());
    for (size_t i = 0; i < v.size(); ++i) {
      double w = std::strtod(want.values[i].c_str(), nullptr);
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(v[i])) << i;
      } else {
        EXPECT_EQ(v[i], w) << i;
      }
    }
    return;
  }
  EXPECT_EQ(g, want.values);
}

// ---- promotion ----

// graft's weak scalars: a C++ int is a weak i32, a double a weak f64, a complex a weak c128.
const TypeInfo kWeak[3] = {{DType::kI32, true}, {DType::kF64, true}, {DType::kC128, true}};

TEST(IntDTypes, StrongPromotionIsJaxsTable) {
  std::vector<int64_t> t = ints(rec("promote.strong"));
  ASSERT_EQ(t.size(), kTable.size() * kTable.size());
  for (size_t i = 0; i < kTable.size(); ++i) {
    for (size_t j = 0; j < kTable.size(); ++j) {
      TypeInfo r = promote_types({kTable[i], false}, {kTable[j], false});
      int64_t want = t[i * kTable.size() + j];
      EXPECT_EQ(r.dtype, kTable[want / 2]) << kTable[i] << " + " << kTable[j];
      EXPECT_EQ(r.weak, want % 2 == 1) << kTable[i] << " + " << kTable[j];
    }
  }
  // And through arrays: u64 + i8 is JAX's weak f64.
  Array s = ones({2}, DType::kU64) + ones({2}, DType::kI8);
  EXPECT_EQ(s.dtype(), DType::kF64);
  EXPECT_TRUE(s.weak_type());
  EXPECT_EQ(result_type({DType::kU64, DType::kI64}), DType::kF64);
}

// JAX with x64 on makes a bool or integer array with a weak scalar a weak i64 / f64 / c128;
// graft's default int, float and complex are 32-bit (JAX with x64 off: DTypeTest in
// dtype_test.cc), so where JAX's answer is weak and 64-bit, graft's is the 32-bit one.
TEST(IntDTypes, WeakPromotionIsJaxsTableWithGraftsDefaults) {
  std::vector<int64_t> t = ints(rec("promote.weak"));
  ASSERT_EQ(t.size(), kTable.size() * 3);
  for (size_t i = 0; i < kTable.size(); ++i) {
    for (int w = 0; w < 3; ++w) {
      int64_t code = t[i * 3 + w];
      DType want = kTable[code / 2];
      bool weak = code % 2 == 1;
      if (weak && want == DType::kI64) want = DType::kI32;
      if (weak && want == DType::kF64) want = DType::kF32;
      if (weak && want == DType::kC128) want = DType::kC64;
      TypeInfo r = promote_types({kTable[i], false}, kWeak[w]);
      EXPECT_EQ(r.dtype, want) << kTable[i] << " with weak " << w;
      EXPECT_EQ(r.weak, weak) << kTable[i] << " with weak " << w;
    }
  }
  for (DType d : kNew) {
    EXPECT_EQ((ones({2}, d) + 2).dtype(), d);
    EXPECT_FALSE((ones({2}, d) + 2).weak_type());
  }
}

// ---- conversions ----

TEST(IntDTypes, ConvertElementTypeWrapsAndSaturatesAsJax) {
  int checked = 0;
  for (DType s : kAllDTypes) {
    for (DType d : kAllDTypes) {
      std::string name = std::string("convert.") + dtype_name(s) + "." + dtype_name(d);
      if (!recs().count(name + ".in")) continue;
      Array x = make(rec(name + ".in"));
      ASSERT_EQ(x.dtype(), s);
      expect_rec(astype(x, d), name + ".out");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 13 * 13 - 9 * 9);  // every pair with a new dtype on either side
}

// ---- elementwise ----

TEST(IntDTypes, ElementwiseOpsWrapAsJax) {
  for (DType d : kNew) {
    const std::string p = std::string("bin.") + dtype_name(d) + ".";
    Array a = make(rec(p + "a")), b = make(rec(p + "b"));
    ASSERT_EQ(a.dtype(), d);
    expect_rec(a + b, p + "add");
    expect_rec(a - b, p + "subtract");
    expect_rec(a * b, p + "multiply");
    expect_rec(binary(PrimitiveId::kDiv, a, b), p + "lax_div");  // by 0: -1, MIN / -1: MIN
    expect_rec(binary(PrimitiveId::kRem, a, b), p + "lax_rem");
    expect_rec(floor_divide(a, b), p + "floor_divide");
    expect_rec(remainder(a, b), p + "remainder");
    expect_rec(shift_left(a, make(rec(p + "left_shift.b"))), p + "left_shift");
    expect_rec(right_shift(a, make(rec(p + "right_shift.b"))), p + "right_shift");
    expect_rec(bitwise_and(a, b), p + "bitwise_and");
    expect_rec(bitwise_or(a, b), p + "bitwise_or");
    expect_rec(bitwise_xor(a, b), p + "bitwise_xor");
    expect_rec(maximum(a, b), p + "maximum");
    expect_rec(minimum(a, b), p + "minimum");
    expect_rec(equal(a, b), p + "equal");
    expect_rec(less(a, b), p + "less");
    expect_rec(greater_equal(a, b), p + "greater_equal");
    const std::string u = std::string("un.") + dtype_name(d) + ".";
    expect_rec(neg(a), u + "negative");
    expect_rec(abs(a), u + "abs");
    expect_rec(sign(a), u + "sign");
    expect_rec(bitwise_not(a), u + "invert");
    expect_rec(bitwise_count(a), u + "bitwise_count");
    expect_rec(square(a), u + "square");
    const std::string sc = std::string("scalar.") + dtype_name(d) + ".";
    expect_rec(a + 100, sc + "add100");
    expect_rec(a * 3, sc + "mul3");
  }
}

// ---- reductions, sort, indexing ----

TEST(IntDTypes, ReductionsSortAndIndexingMatchJax) {
  for (DType d : kNew) {
    const std::string n = dtype_name(d);
    Array x = make(rec("reduce." + n + ".in"));
    // sum / prod of i8, i16 (u16) accumulate in i32 (u32), as JAX's default ints without x64.
    expect_rec(sum(x), "reduce.sum." + n);
    expect_rec(prod(slice(x, {0}, {4})), "reduce.prod." + n);
    expect_rec(max(x), "reduce.max." + n);
    expect_rec(min(x), "reduce.min." + n);
    expect_rec(astype(argmax(x), DType::kI64), "reduce.argmax." + n);
    expect_rec(astype(argmin(x), DType::kI64), "reduce.argmin." + n);
    expect_rec(cumsum(x), "reduce.cumsum." + n);
    expect_rec(sort(x), "reduce.sort." + n);
    expect_rec(astype(argsort(x), DType::kI64), "reduce.argsort." + n);
    Array idx = astype(array<int32_t>({3, 0, 7, 7, 1}), d);
    expect_rec(take(x, idx), "take." + n);
    Array upd = slice(x, {0}, {3});
    expect_rec(scatter_add(x, array<int32_t>({0, 0, 2}), upd), "scatter_add." + n);
    // jit agrees with eager on a small program over the dtype.
    EXPECT_EQ(jit([](const Array& v) { return cumsum(v * v + v); })(x).to_vector<int64_t>(),
              cumsum(x * x + x).to_vector<int64_t>());
  }
}

TEST(IntDTypes, CreationOps) {
  for (DType d : kNew) {
    EXPECT_EQ(iota(d, {4}).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3})) << d;
    EXPECT_EQ(arange(5, d).dtype(), d);
    EXPECT_EQ(arange(5, d).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(full({2}, 7, d).to_vector<int64_t>(), (std::vector<int64_t>{7, 7}));
    EXPECT_EQ(zeros({3}, d).dtype(), d);
  }
  EXPECT_EQ(array<uint64_t>({~0ull}).item<uint64_t>(), ~0ull);
  EXPECT_EQ(array<int8_t>({-128}).item<int64_t>(), -128);
  std::ostringstream os;
  os << DType::kI8 << DType::kI16 << DType::kU16 << DType::kU64;
  EXPECT_EQ(os.str(), "i8i16u16u64");
}

// ---- random bits ----

TEST(IntDTypes, RandomBitsMatchJaxBitForBit) {
  Array key = random::key(42);  // jax.random.PRNGKey(42)
  expect_rec(random::bits(key, {10}, DType::kU8), "bits.u8");
  expect_rec(random::bits(key, {10}, DType::kU16), "bits.u16");
  expect_rec(random::bits(key, {10}, DType::kU32), "bits.u32");
  expect_rec(random::bits(key, {10}, DType::kU64), "bits.u64");
}

// ---- dtype facts ----

TEST(IntDTypes, IinfoCanCastIssubdtypeMatchJax) {
  for (DType d : kIntegerDTypes) {
    SCOPED_TRACE(dtype_name(d));
    std::vector<int64_t> t = ints(rec(std::string("iinfo.") + dtype_name(d)));
    IInfo i = iinfo(d);
    EXPECT_EQ(i.bits, t[0]);
    EXPECT_EQ(i.min, t[1]);
    EXPECT_EQ(std::to_string(i.max), rec(std::string("iinfo.") + dtype_name(d) + ".max").values[0]);
  }
  for (const char* casting : {"safe", "same_kind"}) {
    std::vector<int64_t> t = ints(rec(std::string("can_cast.") + casting));
    for (int a = 0; a < kNumDTypes; ++a) {
      for (int b = 0; b < kNumDTypes; ++b) {
        EXPECT_EQ(can_cast(kTable[a], kTable[b], casting), t[a * kNumDTypes + b] == 1)
            << casting << " " << kTable[a] << " -> " << kTable[b];
      }
    }
  }
  std::vector<int64_t> t = ints(rec("issubdtype"));
  const DTypeCategory cats[4] = {DTypeCategory::kInteger, DTypeCategory::kSignedInteger,
                                 DTypeCategory::kUnsignedInteger, DTypeCategory::kNumber};
  for (int a = 0; a < kNumDTypes; ++a) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(issubdtype(kTable[a], cats[c]), t[a * 4 + c] == 1) << kTable[a] << " " << c;
    }
  }
}

// ---- .npy files ----

TEST(IntDTypes, NpyLoadsNumpysFilesAndWritesTheSameBytes) {
  for (DType d : kNew) {
    SCOPED_TRACE(dtype_name(d));
    std::string path = runfile(std::string("tests/core/testdata/npy/") + dtype_name(d) + ".npy");
    absl::StatusOr<Array> a = load(path);
    ASSERT_TRUE(a.ok()) << a.status();
    Rec want = rec(std::string("bin.") + dtype_name(d) + ".a");
    want.shape = {3, 4};
    Array w = make(want);
    EXPECT_EQ(a->dtype(), d);
    EXPECT_EQ(a->shape(), (Shape{3, 4}));
    EXPECT_TRUE(all(equal(*a, w)).item<bool>());
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(npy_bytes(*a), bytes);
    absl::StatusOr<Array> back = npy_from_bytes(npy_bytes(w));
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(all(equal(*back, w)).item<bool>());
  }
}

}  // namespace
}  // namespace graft
