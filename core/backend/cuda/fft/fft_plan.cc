#include "core/backend/cuda/fft/fft_plan.h"

#include "core/error.h"

namespace graft::cuda::fft {

FftPlan plan_fft(FftType type, const Shape& lengths, const Aval& in, const Aval& out) {
  const size_t k = lengths.size();
  if (k < 1 || k > 3 || in.shape.size() < k || out.shape.size() != in.shape.size()) {
    graft::fail("fft", "the CUDA kernel takes 1 to 3 trailing dims, got fft_lengths ",
         shape_str(lengths), " for ", in.str());
  }
  FftPlan p;
  p.kind = type == FftType::kRfft    ? FftKind::kR2C
           : type == FftType::kIrfft ? FftKind::kC2R
                                     : FftKind::kC2C;
  p.forward = type == FftType::kFft || type == FftType::kRfft;
  p.double_precision = in.dtype == DType::kF64 || in.dtype == DType::kC128;
  p.n.assign(lengths.begin(), lengths.end());
  const size_t lead = in.shape.size() - k;
  p.inembed.assign(in.shape.begin() + lead, in.shape.end());
  p.onembed.assign(out.shape.begin() + lead, out.shape.end());
  p.idist = p.odist = 1;
  for (size_t d = 0; d < k; ++d) {
    p.idist *= p.inembed[d];
    p.odist *= p.onembed[d];
  }
  p.batch = 1;
  for (size_t d = 0; d < lead; ++d) p.batch *= in.shape[d];
  p.in_elements = numel(in.shape);
  p.out_elements = numel(out.shape);
  double count = 1;
  for (int64_t l : lengths) count *= static_cast<double>(l);
  const bool inverse = type == FftType::kIfft || type == FftType::kIrfft;
  p.scale = inverse && count > 0 ? 1.0 / count : 1.0;
  p.empty_output = p.out_elements == 0;
  p.zero_output = !p.empty_output && p.in_elements == 0;
  p.copy_input = p.kind == FftKind::kC2R;
  return p;
}

}  // namespace graft::cuda::fft
