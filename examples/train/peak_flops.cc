// Prints the matmul peak that MFU is measured against: peak_flops [seconds_per_size].
#include <cstdlib>
#include <iostream>

#include "examples/train/progress.h"

int main(int argc, char** argv) {
  graft::train::PeakFlopsOptions options;
  if (argc > 1) options.seconds_per_size = std::atof(argv[1]);
  for (graft::DType dtype : {graft::DType::kF32, graft::DType::kBF16}) {
    graft::train::PeakFlops peak = graft::train::measure_peak_flops(dtype, options);
    std::cout << graft::dtype_name(dtype) << ": " << peak.flops_per_second / 1e9
              << " GFLOP/s (n = " << peak.n << ", best of " << peak.runs << " runs)\n";
  }
  return 0;
}
