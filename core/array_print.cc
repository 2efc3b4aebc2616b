// NumPy-like printing of arrays.
#include <cmath>
#include <functional>
#include <iomanip>
#include <sstream>

#include "core/array.h"

namespace graft {

namespace {

void print_value(std::ostream& os, double v, DType d) {
  if (d == DType::kBool) {
    os << (v != 0 ? "True" : "False");
  } else if (is_integral(d)) {
    os << static_cast<int64_t>(v);
  } else if (std::isnan(v)) {
    os << "nan";
  } else if (std::isinf(v)) {
    os << (v > 0 ? "inf" : "-inf");
  } else {
    std::ostringstream s;
    s << std::setprecision(d == DType::kF64 ? 8 : 6) << v;
    std::string t = s.str();
    if (t.find_first_of(".e") == std::string::npos) t += ".";
    os << t;
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Array& a) {
  if (!a.valid()) return os << "Array(<empty handle>)";
  if (a.is_tracer()) return os << "Traced<" << a.aval().str() << ">";
  std::vector<double> v = a.to_vector<double>();
  const Shape& s = a.shape();
  const int rank = a.ndim();
  constexpr int64_t kEdge = 3, kMax = 1000;  // summarize big arrays like NumPy
  bool summarize = static_cast<int64_t>(v.size()) > kMax;
  Shape strides = row_major_strides(s);
  // Iterative walk over the nested brackets.
  std::vector<int64_t> idx;
  std::ostringstream out;
  if (rank == 0) {
    print_value(out, v.empty() ? 0 : v[0], a.dtype());
  } else {
    std::function<void(int, int64_t)> rec;  // depth is the rank: bounded, not graph depth
    rec = [&](int dim, int64_t offset) {
      out << "[";
      for (int64_t i = 0; i < s[dim]; ++i) {
        if (summarize && s[dim] > 2 * kEdge && i == kEdge) {
          out << "..., ";
          i = s[dim] - kEdge;
        }
        if (dim + 1 == rank) {
          print_value(out, v[offset + i], a.dtype());
        } else {
          rec(dim + 1, offset + i * strides[dim]);
        }
        if (i + 1 < s[dim]) out << (dim + 1 == rank ? ", " : ",\n" + std::string(dim + 1, ' '));
      }
      out << "]";
    };
    rec(0, 0);
  }
  return os << "Array(" << out.str() << ", dtype=" << dtype_name(a.dtype())
            << ", shape=" << shape_str(s) << ")";
}

std::string to_string(const Array& a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

}  // namespace graft
