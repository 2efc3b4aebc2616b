// conv_general_dilated on the CPU: the direct loop against oneDNN's convolution
// (core/backend/cpu/onednn_conv.h), forward and forward + backward (the gradients of
// sum(conv(x, w) * ct) in x and w: two more convolutions), on small convnet layers
// (NHWC / HWIO, and one NCHW / OIHW, 3x3, "SAME"; stride 2: its input gradient is a convolution
// with lhs dilation; depthwise: its kernel gradient is one with batch groups). The two paths are
// the same program with oneDNN switched on or off (set_onednn_enabled), measured alternately in one
// run; fastest of `repeats` calls.
//
//   bazel run -c opt //bench:conv_bench -- [batch] [repeats]
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "core/backend/cpu/onednn_conv.h"
#include "core/backend/cpu/onednn_matmul.h"
#include "core/backend/cpu/openmp_policy.h"
#include "core/backend/cpu/parallel.h"
#include "core/ops.h"
#include "core/primitives/conv.h"
#include "transforms/autodiff.h"

namespace {

using namespace graft;

Array normal(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(numel(shape));
  for (auto& x : v) x = dist(gen);
  Array a = array<float>(v, shape);
  eval(a);
  return a;
}

struct Layer {
  int64_t size, in_ch, out_ch, stride, groups;
  bool nchw = false;  // NCHW / OIHW instead of NHWC / HWIO
};

// Fastest time of f with oneDNN on and off (alternating the two per repeat), and how many
// convolutions of one call oneDNN ran.
template <typename F>
void compare(const char* label, const Layer& l, int repeats, F f) {
  double t_loop = 1e300, t_dnnl = 1e300;
  int64_t runs = 0;
  for (int r = 0; r < repeats; ++r) {
    cpu::set_onednn_enabled(false);
    t_loop = std::min(t_loop, graft::bench::best_ms(1, f));
    cpu::set_onednn_enabled(true);
    const int64_t before = cpu::onednn_conv_stats().runs;
    t_dnnl = std::min(t_dnnl, graft::bench::best_ms(1, f));
    runs = (cpu::onednn_conv_stats().runs - before) / 2;  // best_ms warms up once
  }
  std::printf("%-9s %-6s %3lldx%-3lld %3lld->%-3lld %6lld %6lld %12.2f %12.2f %8.1fx %6lld\n",
              label, l.nchw ? "NCHW" : "NHWC", static_cast<long long>(l.size),
              static_cast<long long>(l.size), static_cast<long long>(l.in_ch),
              static_cast<long long>(l.out_ch), static_cast<long long>(l.stride),
              static_cast<long long>(l.groups), t_loop, t_dnnl, t_loop / t_dnnl,
              static_cast<long long>(runs));
}

}  // namespace

int main(int argc, char** argv) {
  cpu::reexec_with_passive_openmp(argv);
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 32;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  std::printf("graft pool threads: %d, OMP_NUM_THREADS=%s; batch %lld, 3x3 SAME, f32\n",
              cpu::num_threads(),
              std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "(unset)",
              static_cast<long long>(batch));
  std::printf("%-9s %-6s %7s %8s %6s %6s %12s %12s %9s %6s\n", "pass", "layout", "HxW", "channels",
              "stride", "groups", "loop ms", "oneDNN ms", "speedup", "convs");
  const ConvDims nhwc("NHWC", "HWIO", "NHWC");
  for (const Layer& l : {Layer{32, 3, 32, 1, 1}, Layer{32, 32, 64, 1, 1}, Layer{32, 32, 64, 2, 1},
                         Layer{32, 64, 64, 1, 64}, Layer{32, 32, 64, 1, 1, true}}) {
    const ConvDims dn = l.nchw ? ConvDims("NCHW", "OIHW", "NCHW") : nhwc;
    const int64_t out_size = (l.size + l.stride - 1) / l.stride;
    auto layout = [&](int64_t n, int64_t c, int64_t hw) {
      return l.nchw ? Shape{n, c, hw, hw} : Shape{n, hw, hw, c};
    };
    const Array x = normal(layout(batch, l.in_ch, l.size), 1);
    const Array w = normal(l.nchw ? Shape{l.out_ch, l.in_ch / l.groups, 3, 3}
                                  : Shape{3, 3, l.in_ch / l.groups, l.out_ch},
                           2);
    const Array ct = normal(layout(batch, l.out_ch, out_size), 3);
    auto conv = [&](const Array& a, const Array& b) {
      return conv_general_dilated(a, b, {l.stride, l.stride}, "SAME", {}, {}, dn, l.groups);
    };
    const int64_t pad_lo = l.stride == 1 ? 1 : 0;  // "SAME" on an even size: (0, 1) at stride 2
    const ConvParams p{.window_strides = {l.stride, l.stride},
                       .padding = {{pad_lo, 1}, {pad_lo, 1}},
                       .lhs_dilation = {1, 1},
                       .rhs_dilation = {1, 1},
                       .dims = conv_dimension_numbers(4, 4, dn),
                       .feature_group_count = l.groups};
    const cpu::ConvOperands ops{x.shape(), w.shape(), ct.shape(), DType::kF32, DType::kF32};
    std::printf("  forward on oneDNN: %s\n", cpu::onednn_conv_impl(p, ops).c_str());
    compare("forward", l, repeats, [&] { eval(conv(x, w)); });
    auto loss = [&](const Array& a, const Array& b) { return sum(conv(a, b) * ct); };
    compare("fwd+bwd", l, repeats, [&] {
      auto [v, g] = value_and_grad(loss, argnums<0, 1>)(x, w);
      eval(v, std::get<0>(g), std::get<1>(g));
    });
  }
  return 0;
}
