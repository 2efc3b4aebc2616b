// .npy reading and writing (NumPy's format: the magic "\x93NUMPY", a version, a header length,
// a Python-literal dict {'descr', 'fortran_order', 'shape'} padded with spaces to a multiple
// of 64 bytes and ended by '\n', then the raw data). The reader checks every length against
// the bytes there are, and answers a Status for anything it cannot read.
#include "core/numpy/npy_io.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// bf16 is '<V2', as numpy writes ml_dtypes.bfloat16 (and jnp.load reads it back).
const char* descr_of(DType d) {
  switch (d) {
    case DType::kBool: return "|b1";
    case DType::kU8: return "|u1";
    case DType::kU32: return "<u4";
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kF16: return "<f2";
    case DType::kBF16: return "<V2";
    case DType::kF32: return "<f4";
    case DType::kF64: return "<f8";
    case DType::kC64: return "<c8";
    case DType::kC128: return "<c16";
    case DType::kI8: return "|i1";
    case DType::kI16: return "<i2";
    case DType::kU16: return "<u2";
    case DType::kU64: return "<u8";
    case DType::kF8E4M3FN:  // no descr (float8_refusal); never written
    case DType::kF8E5M2: return "?";
  }
  return "?";
}

std::optional<DType> dtype_of_descr(std::string d) {
  if (d.size() >= 2 && (d[0] == '=' || d[0] == '|')) d[0] = '<';
  std::vector<DType> all(kAllDTypes, kAllDTypes + kNumDTypes);
  all.insert(all.end(), {DType::kC64, DType::kC128});
  for (DType t : all) {
    std::string want = descr_of(t);
    want[0] = '<';
    if (d == want) return t;
  }
  return std::nullopt;
}

absl::Status bad(const std::string& what) {
  return absl::InvalidArgumentError("load: " + what);
}

// A tiny reader of the header dict's Python literals.
struct HeaderParser {
  std::string_view s;
  size_t i = 0;
  void space() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    space();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::optional<std::string> str() {
    space();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) return std::nullopt;
    const char q = s[i++];
    const size_t end = s.find(q, i);
    if (end == std::string_view::npos) return std::nullopt;
    std::string out(s.substr(i, end - i));
    i = end + 1;
    return out;
  }
  std::optional<std::string> word() {
    space();
    size_t j = i;
    while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i) return std::nullopt;
    std::string out(s.substr(i, j - i));
    i = j;
    return out;
  }
  std::optional<Shape> tuple() {
    if (!eat('(')) return std::nullopt;
    Shape shape;
    while (!eat(')')) {
      auto w = word();
      if (!w || w->size() > 15 || !std::all_of(w->begin(), w->end(), [](unsigned char c) { return std::isdigit(c) != 0; })) return std::nullopt;
      shape.push_back(std::stoll(*w));
      if (!eat(',')) {
        if (!eat(')')) return std::nullopt;
        break;
      }
    }
    return shape;
  }
};

struct Header {
  DType dtype;
  bool fortran = false;
  Shape shape;
};

absl::StatusOr<Header> parse_header(std::string_view text) {
  HeaderParser p{text};
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  if (!p.eat('{')) return bad("the header is not a dict");
  while (!p.eat('}')) {
    auto key = p.str();
    if (!key || !p.eat(':')) return bad("malformed header dict");
    if (*key == "descr") {
      descr = p.str();
      if (!descr) return bad("'descr' is not a string (structured dtypes are not supported)");
    } else if (*key == "fortran_order") {
      auto w = p.word();
      if (!w || (*w != "True" && *w != "False")) return bad("'fortran_order' is not True or False");
      fortran = *w == "True";
    } else if (*key == "shape") {
      shape = p.tuple();
      if (!shape) return bad("'shape' is not a tuple of sizes");
    } else {
      return bad("unexpected header key '" + *key + "'");
    }
    if (!p.eat(',')) {
      if (!p.eat('}')) return bad("malformed header dict");
      break;
    }
  }
  if (!descr || !fortran || !shape) return bad("the header lacks descr, fortran_order or shape");
  if ((*descr)[0] == '>' && descr->size() > 2) {
    return bad("big-endian data ('" + *descr + "') is not supported");
  }
  auto dt = dtype_of_descr(*descr);
  if (!dt) return bad("unsupported dtype '" + *descr + "'");
  return Header{*dt, *fortran, *shape};
}

}  // namespace

// ml_dtypes' fp8 types have no descr of their own (float8_e4m3fn is '<V1', a void type numpy
// reads back as raw bytes), so there is no file both sides would read as fp8.
namespace {
std::string float8_refusal(DType d) {
  return std::string(dtype_name(d)) +
         " has no .npy descr (ml_dtypes' fp8 types have none); convert it first, e.g. to f32";
}
}  // namespace

std::string npy_bytes(const Array& x) {
  if (is_float8(x.dtype())) fail("npy_bytes", float8_refusal(x.dtype()));
  std::ostringstream dict;
  dict << "{'descr': '" << descr_of(x.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (size_t k = 0; k < x.shape().size(); ++k) {
    dict << x.shape()[k] << (x.ndim() == 1 ? "," : k + 1 < x.shape().size() ? ", " : "");
  }
  dict << "), }";
  std::string header = dict.str();
  const size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  auto buf = x.host_buffer();
  out.append(static_cast<const char*>(buf->data()), static_cast<size_t>(x.nbytes()));
  return out;
}

absl::StatusOr<Array> npy_from_bytes(std::string_view bytes) {
  if (bytes.size() < kMagicLen + 4 || bytes.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen)) {
    return bad("not a .npy file (no \\x93NUMPY magic)");
  }
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  const int major = u[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = u[8] | (size_t{u[9]} << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    header_len = u[8] | (size_t{u[9]} << 8) | (size_t{u[10]} << 16) | (size_t{u[11]} << 24);
    start = 12;
  } else {
    return bad("unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - start) return bad("truncated header");
  auto h = parse_header(bytes.substr(start, header_len));
  if (!h.ok()) return h.status();
  int64_t n = 1;
  for (int64_t d : h->shape) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 50) / d)) return bad("shape is too large");
    n *= d;
  }
  const size_t data = start + header_len, need = static_cast<size_t>(n * dtype_size(h->dtype));
  if (bytes.size() - data < need) {
    return bad("truncated data: " + std::to_string(bytes.size() - data) + " bytes for " +
               std::to_string(need));
  }
  Shape stored = h->shape;  // Fortran order: the reversed shape in C order, then transposed
  if (h->fortran) std::reverse(stored.begin(), stored.end());
  Array out = reshape(frombuffer(bytes.substr(data, need), h->dtype), stored);
  if (h->fortran && out.ndim() > 1) out = transpose(out);
  return out;
}

absl::Status save(const std::string& path, const Array& x) {
  if (is_float8(x.dtype())) return absl::InvalidArgumentError("save: " + float8_refusal(x.dtype()));
  const std::string bytes = npy_bytes(x);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return absl::UnavailableError("save: cannot open " + path + " for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return absl::DataLossError("save: writing " + path + " failed");
  return absl::OkStatus();
}

absl::StatusOr<Array> load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError("load: cannot open " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return absl::DataLossError("load: reading " + path + " failed");
  const std::string bytes = ss.str();
  auto out = npy_from_bytes(bytes);
  if (!out.ok()) return absl::InvalidArgumentError(std::string(out.status().message()) + " (" + path + ")");
  return out;
}

}  // namespace graft
