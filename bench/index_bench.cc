// Timings of the index family's CPU kernels. Gather of embedding rows is compared with a
// plain memcpy of the same number of bytes (the bound a row gather can reach).
//   bazel run //bench:index_bench   (GRAFT_NUM_THREADS sets the pool size)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "bench/timing.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/buffer.h"
#include "core/ops.h"
#include "core/primitives/index.h"

namespace {

// Median of `reps` runs of fn after a warm-up run, in milliseconds (bench/timing.h).
double time_ms(int reps, const std::function<void()>& fn) {
  return graft::bench::median_ms(reps, fn);
}

}  // namespace

int main() {
  using namespace graft;
  const int64_t vocab = 8192, dim = 512, rows = 65536;
  const int reps = 9;
  std::mt19937 gen(1);
  std::vector<float> table_host(vocab * dim);
  for (auto& v : table_host) v = static_cast<float>(gen() % 1000) * 1e-3f;
  std::vector<int32_t> idx_host(rows);
  for (auto& i : idx_host) i = static_cast<int32_t>(gen() % vocab);
  Array table = array<float>(table_host, Shape{vocab, dim});
  Array idx = array<int32_t>(idx_host, Shape{rows});
  eval(table, idx);
  const double bytes = static_cast<double>(rows * dim * sizeof(float));
  std::printf("threads: %d\n", cpu::num_threads());

  double gather = time_ms(reps, [&] { eval(take(table, idx)); });
  // memcpy of the same bytes into a fresh buffer (pays first-touch page faults like the
  // gather's output does), single-threaded and split over the pool.
  std::vector<float> src(rows * dim, 1.0f);
  double copy1 = time_ms(reps, [&] {
    auto dst = Buffer::make(static_cast<size_t>(bytes));
    std::memcpy(dst->data(), src.data(), static_cast<size_t>(bytes));
  });
  double copyp = time_ms(reps, [&] {
    auto dst = Buffer::make(static_cast<size_t>(bytes));
    char* d = static_cast<char*>(dst->data());
    const char* s = reinterpret_cast<const char*>(src.data());
    cpu::parallel_for(rows, 64, [&](int64_t a, int64_t b) {
      std::memcpy(d + a * dim * 4, s + a * dim * 4, static_cast<size_t>((b - a) * dim * 4));
    });
  });
  // memcpy into an already-touched buffer: the raw copy bandwidth.
  std::vector<float> warm(rows * dim, 0.0f);
  double copyw =
      time_ms(reps, [&] { std::memcpy(warm.data(), src.data(), static_cast<size_t>(bytes)); });
  // The gather kernel alone, writing into an already-touched output buffer (as a caching
  // allocator would hand out): compare with the touched memcpy.
  Gather prim(0, 0, GatherMode::kFill);
  std::vector<std::shared_ptr<Buffer>> in_bufs{table.buffer(), idx.buffer()};
  std::shared_ptr<Buffer>* inputs[] = {&in_bufs[0], &in_bufs[1]};
  const Aval* in_avals[] = {&table.aval(), &idx.aval()};
  const Aval out_aval{{rows, dim}, DType::kF32};
  const Aval* out_avals[] = {&out_aval};
  std::vector<std::shared_ptr<Buffer>> outs{Buffer::make(static_cast<size_t>(bytes))};
  std::memset(outs[0]->data(), 0, static_cast<size_t>(bytes));
  cpu::Kernel kernel = cpu::kernels()[static_cast<int>(PrimitiveId::kGather)];
  double gather_warm = time_ms(reps, [&] {
    cpu::Call call(prim, inputs, in_avals, 2, out_avals, outs.data(), 1);
    kernel(call);
  });
  auto gbs = [&](double ms) { return bytes / (ms * 1e-3) / 1e9; };
  std::printf("gather %lld rows x %lld f32 from (%lld, %lld): %.2f ms (%.1f GB/s written)\n",
              (long long)rows, (long long)dim, (long long)vocab, (long long)dim, gather,
              gbs(gather));
  std::printf("gather kernel into a touched buffer: %.2f ms (%.1f GB/s)\n", gather_warm,
              gbs(gather_warm));
  std::printf("memcpy same bytes, fresh buffer, 1 thread:  %.2f ms (%.1f GB/s)\n", copy1,
              gbs(copy1));
  std::printf("memcpy same bytes, fresh buffer, parallel:  %.2f ms (%.1f GB/s)\n", copyp,
              gbs(copyp));
  std::printf("memcpy same bytes, touched buffer, 1 thread: %.2f ms (%.1f GB/s)\n", copyw,
              gbs(copyw));

  // Embedding gradient: scatter_add of the same rows back into a zero table.
  Array upd = take(table, idx);
  eval(upd);
  Array zero = zeros({vocab, dim});
  eval(zero);
  double scatter = time_ms(reps, [&] { eval(scatter_add(zero, idx, upd)); });
  std::printf("scatter_add %lld rows x %lld f32 into (%lld, %lld): %.2f ms\n", (long long)rows,
              (long long)dim, (long long)vocab, (long long)dim, scatter);

  {  // MoE combine: each of 2048 tokens gets its 2 experts' rows back.
    std::vector<int32_t> back(4096);
    for (int32_t i = 0; i < 4096; ++i) back[i] = static_cast<int32_t>(gen() % 2048);
    Array bi = array<int32_t>(back, Shape{4096});
    Array bu = take(table, bi % 8192);
    Array bz = zeros({2048, dim});
    eval(bi, bu, bz);
    double t = time_ms(reps, [&] { eval(scatter_add(bz, bi, bu)); });
    std::printf("scatter_add 4096 rows x 512 into (2048, 512): %.3f ms\n", t);
    // Skewed: half the updates go to rows 0..15 (one part of the output gets most of the work).
    std::vector<int32_t> skew(rows);
    for (int64_t i = 0; i < rows; ++i)
      skew[i] = static_cast<int32_t>(i % 2 ? gen() % 16 : gen() % vocab);
    Array si = array<int32_t>(skew, Shape{rows});
    eval(si);
    double ts = time_ms(reps, [&] { eval(scatter_add(zero, si, upd)); });
    std::printf("scatter_add skewed %lld rows: %.2f ms\n", (long long)rows, ts);
  }
  // take_along_axis with one element per row (picking label logits).
  Array logits = take(table, idx);
  Array labels = reshape(astype(idx, DType::kI32) % 512, {rows, 1});
  eval(logits, labels);
  double along = time_ms(reps, [&] { eval(take_along_axis(logits, labels, 1)); });
  std::printf("take_along_axis (%lld, %lld) -> (%lld, 1): %.3f ms\n", (long long)rows,
              (long long)dim, (long long)rows, along);

  // Sorting rows.
  Array keys = reshape(take(table, idx), {rows * dim / 1024, 1024});
  eval(keys);
  double s = time_ms(3, [&] { eval(sort(keys)); });
  double as = time_ms(3, [&] { eval(argsort(keys)); });
  std::printf("sort (%lld, 1024) f32 rows: %.1f ms; argsort: %.1f ms\n",
              (long long)(rows * dim / 1024), s, as);
  return 0;
}
