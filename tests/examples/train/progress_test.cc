// Progress lines (golden strings written by hand), durations, MFU, step timing, peak FLOP/s.
#include "examples/train/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "core/error.h"

namespace graft::train {
namespace {

TEST(Progress, FormatsTheProgressLine) {
  ProgressStats s;
  s.step = 10;
  s.total_steps = 1000;
  s.loss = 2.125;
  s.lr = 3e-4;
  s.grad_norm = 0.75;
  s.tokens_per_second = 12345.4;
  s.mfu_percent = 41.5;
  s.elapsed_seconds = 83;
  s.eta_seconds = 3723;
  EXPECT_EQ(format_progress(s),
            "step   10/1000 | loss 2.1250 | lr 3.00e-04 | gnorm 0.750 | 12,345 tok/s | "
            "mfu 41.50% | elapsed 0:01:23 | eta 1:02:03");
  s.memory_bytes_per_device = 1.5 * 1024 * 1024;
  EXPECT_EQ(format_progress(s),
            "step   10/1000 | loss 2.1250 | lr 3.00e-04 | gnorm 0.750 | 12,345 tok/s | "
            "mfu 41.50% | mem/dev 1.5 MiB | elapsed 0:01:23 | eta 1:02:03");
  s.peak_bytes = 2.25 * 1024 * 1024;
  s.rss_bytes = 300.0 * 1024 * 1024;
  EXPECT_EQ(format_progress(s),
            "step   10/1000 | loss 2.1250 | lr 3.00e-04 | gnorm 0.750 | 12,345 tok/s | "
            "mfu 41.50% | mem/dev 1.5 MiB | peak 2.2 MiB | rss 300.0 MiB | elapsed 0:01:23 | "
            "eta 1:02:03");

  ProgressStats first;  // no MFU known, no ETA yet
  first.step = 1;
  first.total_steps = 5;
  first.loss = 9;
  EXPECT_EQ(format_progress(first),
            "step 1/5 | loss 9.0000 | lr 0.00e+00 | gnorm 0.000 | 0 tok/s | elapsed 0:00:00 | "
            "eta -:--:--");
}

TEST(Progress, FormatsTheValidationLineAlignedWithProgress) {
  ValidationStats v;
  v.step = 10;
  v.total_steps = 1000;
  v.loss = 2.0;  // ppl = e^2 = 7.389...
  v.batches = 8;
  v.seconds = 2.2;
  EXPECT_EQ(format_validation(v), "val    10/1000 | loss 2.0000 | ppl 7.39 | 8 batches in 0:00:02");
  v.loss = 20;  // e^20 = 4.85e8: scientific
  EXPECT_EQ(format_validation(v),
            "val    10/1000 | loss 20.0000 | ppl 4.852e+08 | 8 batches in 0:00:02");
}

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(0), "0:00:00");
  EXPECT_EQ(format_duration(59.4), "0:00:59");
  EXPECT_EQ(format_duration(59.5), "0:01:00");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(100000), "27:46:40");
  EXPECT_EQ(format_duration(-1), "-:--:--");
  EXPECT_EQ(format_duration(std::nan("")), "-:--:--");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "-:--:--");
}

TEST(Progress, Thousands) {
  EXPECT_EQ(format_thousands(0), "0");
  EXPECT_EQ(format_thousands(999), "999");
  EXPECT_EQ(format_thousands(999.6), "1,000");
  EXPECT_EQ(format_thousands(1234567), "1,234,567");
  EXPECT_EQ(format_thousands(-1234), "-1,234");
}

TEST(Progress, MfuAndFlopsPerToken) {
  // 6e9 FLOPs/token * 1000 tokens/s = 6e12 FLOP/s of a 1e14 peak = 6 %.
  EXPECT_DOUBLE_EQ(mfu(6e9, 1000, 1e14), 6.0);
  EXPECT_EQ(mfu(6e9, 1000, 0), 0.0);
  // 6 * 1e6 + 12 * 2 layers * 64 dim * 128 tokens = 6,000,000 + 196,608.
  EXPECT_DOUBLE_EQ(transformer_flops_per_token(1e6, 2, 64, 128), 6196608.0);
}

TEST(Progress, EmaAndStepTimer) {
  Ema ema(0.5);
  EXPECT_TRUE(ema.empty());
  ema.add(4);
  EXPECT_EQ(ema.value(), 4);  // the first sample sets it
  ema.add(2);
  EXPECT_EQ(ema.value(), 3);  // 0.5 * 2 + 0.5 * 4
  ema.add(6);
  EXPECT_EQ(ema.value(), 4.5);
  EXPECT_EQ(ema.count(), 3);

  StepTimer timer(0.5, 1);
  EXPECT_EQ(timer.eta_seconds(100), -1);
  timer.record(10, 50);  // 5 s/step, includes compilation: used only while alone
  EXPECT_EQ(timer.seconds_per_step(), 5);
  EXPECT_EQ(timer.eta_seconds(100), 500);
  timer.record(10, 10);  // 1 s/step replaces it
  EXPECT_EQ(timer.eta_seconds(100), 100);
  timer.record(5, 10);  // 2 s/step: 0.5 * 2 + 0.5 * 1
  EXPECT_EQ(timer.seconds_per_step(), 1.5);
  EXPECT_EQ(timer.eta_seconds(10), 15);
  EXPECT_EQ(timer.eta_seconds(-3), 0);
  timer.record(0, 5);  // no steps: ignored
  EXPECT_EQ(timer.seconds_per_step(), 1.5);
}

TEST(Progress, Stopwatch) {
  Stopwatch watch;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  double lap = watch.lap();
  EXPECT_GE(lap, 0.02);
  EXPECT_LT(lap, 5.0);
  EXPECT_LT(watch.lap(), lap);  // the next lap starts now
  EXPECT_GE(watch.seconds(), 0.02);
  watch.reset();
  EXPECT_LT(watch.seconds(), 0.02);
}

TEST(Progress, MeasurePeakFlops) {
  PeakFlopsOptions small;
  small.sizes = {32, 64};
  small.seconds_per_size = 0.01;
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    PeakFlops peak = measure_peak_flops(dtype, small);
    EXPECT_TRUE(peak.n == 32 || peak.n == 64);
    EXPECT_EQ(peak.runs, small.repeats);
    // Sane magnitudes: more than 1 MFLOP/s, less than 1 PFLOP/s on a CPU.
    EXPECT_GT(peak.flops_per_second, 1e6) << dtype_name(dtype);
    EXPECT_LT(peak.flops_per_second, 1e15) << dtype_name(dtype);
  }
  try {
    measure_peak_flops(DType::kI32, small);
    ADD_FAILURE() << "no error for i32";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[measure_peak_flops]", 0), 0u) << e.what();
  }
  EXPECT_THROW(measure_peak_flops(DType::kF32, PeakFlopsOptions{{}, 0.01}), Error);
  EXPECT_THROW(measure_peak_flops(DType::kF32, PeakFlopsOptions{{32}, 0.01, 0}), Error);
}

}  // namespace
}  // namespace graft::train
