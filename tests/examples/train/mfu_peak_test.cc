// MfuPeak with injected peak measurements: the peak printed at the start, MFU capped at 100%
// by raising a peak that a throughput proved low (noted once), and the re-measurement at the
// end keeping the higher peak. Expected percentages are worked out by hand in the comments.
#include "examples/train/mfu_peak.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace graft::train {
namespace {

// Returns the given peaks one per call (the start, then the end).
MfuPeak::Measure scripted(std::vector<double> peaks, int* calls) {
  return [peaks, calls] {
    const double p = peaks.at(static_cast<size_t>(*calls));
    ++*calls;
    return PeakFlops{p, 1024, 4};
  };
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MfuPeak, BusyMachinePeakNeverGivesMoreThan100Percent) {
  // The numbers: measured 133 GFLOP/s on a busy machine, 466 quiet.
  std::ostringstream out;
  int calls = 0;
  MfuPeak peak(0, 1e6, "f32 matmul", out, scripted({133e9, 466e9}, &calls));
  EXPECT_EQ(calls, 1);
  EXPECT_NE(out.str().find("peak f32 matmul measured now: 133.0 GFLOP/s (n=1024, best of 4"),
            std::string::npos)
      << out.str();
  // 1e6 FLOPs/token * 50,000 tok/s = 5e10 FLOP/s; / 1.33e11 = 37.59...%.
  EXPECT_NEAR(peak.mfu_percent(5e4), 100.0 * 5e10 / 133e9, 1e-9);
  // 2e11 FLOP/s achieved: the peak was low. The old formula said 150.4%; now 100% and the
  // peak is 2e11.
  EXPECT_GT(mfu(1e6, 2e5, 133e9), 100.0);
  EXPECT_DOUBLE_EQ(peak.mfu_percent(2e5), 100.0);
  EXPECT_DOUBLE_EQ(peak.peak(), 2e11);
  EXPECT_DOUBLE_EQ(peak.mfu_percent(3e5), 100.0);  // raised again, not noted again
  EXPECT_DOUBLE_EQ(peak.peak(), 3e11);
  EXPECT_EQ(count(out.str(), "MFU reads at most 100%"), 1) << out.str();
  EXPECT_DOUBLE_EQ(peak.mfu_percent(1.5e5), 50.0);  // 1.5e11 / 3e11
  // The end: re-measured at 466 GFLOP/s, higher than 300: kept. Run MFU 1.5e11 / 4.66e11.
  peak.finish(1.5e5);
  EXPECT_EQ(calls, 2);
  EXPECT_DOUBLE_EQ(peak.peak(), 466e9);
  EXPECT_NE(out.str().find("measured again at the end: 466.0 GFLOP/s (in use 300.0 GFLOP/s); "
                           "kept 466.0 GFLOP/s; mfu over the run 32.19%"),
            std::string::npos)
      << out.str();
}

TEST(MfuPeak, LowerRemeasurementKeepsTheStartPeak) {
  std::ostringstream out;
  int calls = 0;
  MfuPeak peak(0, 2e6, "bf16 matmul", out, scripted({400e9, 150e9}, &calls));
  peak.finish(5e4);  // 1e11 / 4e11 = 25%
  EXPECT_DOUBLE_EQ(peak.peak(), 400e9);
  EXPECT_NE(out.str().find("measured again at the end: 150.0 GFLOP/s (in use 400.0 GFLOP/s); "
                           "kept 400.0 GFLOP/s; mfu over the run 25.00%"),
            std::string::npos)
      << out.str();
}

TEST(MfuPeak, ConfiguredPeakIsNeverMeasuredButStillCapped) {
  std::ostringstream out;
  int calls = 0;
  MfuPeak peak(1e11, 1e6, "f32 matmul", out, scripted({}, &calls));
  EXPECT_NE(out.str().find("peak for MFU: 100.0 GFLOP/s (metrics.peak_flops)"), std::string::npos)
      << out.str();
  EXPECT_DOUBLE_EQ(peak.mfu_percent(2e4), 20.0);  // 2e10 / 1e11
  EXPECT_DOUBLE_EQ(peak.mfu_percent(4e5), 100.0);
  peak.finish(0);  // no run throughput: only the peak is printed
  EXPECT_EQ(calls, 0);
  EXPECT_DOUBLE_EQ(peak.peak(), 4e11);
  EXPECT_NE(out.str().find("peak for MFU: 400.0 GFLOP/s\n"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace graft::train
