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

// NumPy's form: 1.+2.j, 0.5-1.j.
void print_complex(std::ostream& os, std::complex<double> v, DType d) {
  DType part = complex_part_dtype(d);
  print_value(os, v.real(), part);
  os << (v.imag() < 0 || (v.imag() == 0 && std::signbit(v.imag())) ? "-" : "+");
  print_value(os, std::abs(v.imag()), part);
  os << "j";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Array& a) {
  if (!a.valid()) return os << "Array(<empty handle>)";
  if (a.is_tracer()) return os << "Traced<" << a.aval().str() << ">";
  const bool cplx = is_complex(a.dtype());
  std::vector<std::complex<double>> cv;
  std::vector<double> v;
  if (cplx) {
    cv = a.to_vector<std::complex<double>>();
  } else {
    v = a.to_vector<double>();
  }
  auto put = [&](std::ostream& os, int64_t i) {
    if (cplx) return print_complex(os, cv[i], a.dtype());
    print_value(os, v[i], a.dtype());
  };
  const Shape& s = a.shape();
  const int rank = a.ndim();
  constexpr int64_t kEdge = 3, kMax = 1000;  // summarize big arrays like NumPy
  bool summarize = a.size() > kMax;
  Shape strides = row_major_strides(s);
  // Iterative walk over the nested brackets.
  std::vector<int64_t> idx;
  std::ostringstream out;
  if (rank == 0) {
    if (a.size() > 0) put(out, 0);
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
          put(out, offset + i);
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
