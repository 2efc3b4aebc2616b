// Fits a cubic to noisy samples of sin(3x) with lstsq, the normal equations and qr, and prints
// the coefficients of each and the residual.
#include <cstdio>

#include "core/random/random.h"
#include "examples/least_squares/least_squares.h"

int main() {
  using namespace graft;
  const int64_t n = 40, degree = 3;
  Array x = linspace(-1.0, 1.0, n);
  Array noise = 0.05 * random::normal(random::key(0), {n});
  Array y = sin(3.0 * x) + noise;
  Array a = examples::design_matrix(x, degree);
  const char* names[] = {"lstsq", "normal equations", "qr"};
  Array fits[] = {examples::fit_lstsq(a, y), examples::fit_normal_equations(a, y),
                  examples::fit_qr(a, y)};
  for (int i = 0; i < 3; ++i) {
    std::vector<float> c = fits[i].to_vector<float>();
    float r = sum(square(matmul(a, fits[i]) - y)).item<float>();
    std::printf("%-17s c = [% .5f % .5f % .5f % .5f]  |Ac - y|^2 = %.6f\n", names[i], c[0], c[1],
                c[2], c[3], r);
  }
  return 0;
}
