#include "checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include "checkpoint/file_util.h"
#include "core/error.h"
#include "nlohmann/json.hpp"

namespace graft::checkpoint {
namespace {

using json = nlohmann::json;

struct DTypeName {
  DType dtype;
  const char* name;
  int64_t size;
};
constexpr DTypeName kDTypes[] = {
    {DType::kBool, "BOOL", 1}, {DType::kU8, "U8", 1},   {DType::kU32, "U32", 4},
    {DType::kI32, "I32", 4},   {DType::kI64, "I64", 8}, {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2}, {DType::kF32, "F32", 4}, {DType::kF64, "F64", 8},
    {DType::kC64, "C64", 8},  // safetensors has no complex128
    {DType::kI8, "I8", 1},     {DType::kI16, "I16", 2}, {DType::kU16, "U16", 2},
    {DType::kU64, "U64", 8},
    {DType::kF8E4M3FN, "F8_E4M3", 1}, {DType::kF8E5M2, "F8_E5M2", 1},  // the spec's fp8 names
};

template <typename... P>
absl::Status bad(const P&... parts) {
  return absl::DataLossError(str_cat("safetensors: ", parts...));
}

// Dims are bounded so that products below cannot overflow before they are checked.
constexpr uint64_t kMaxDim = uint64_t{1} << 48;
constexpr unsigned __int128 kTooBig = static_cast<unsigned __int128>(1) << 64;

std::string shape_str_local(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

const char* safetensors_dtype_name(DType d) {
  for (const auto& e : kDTypes) {
    if (e.dtype == d) return e.name;
  }
  return "?";
}

std::optional<DType> parse_safetensors_dtype(std::string_view name) {
  for (const auto& e : kDTypes) {
    if (name == e.name) return e.dtype;
  }
  return std::nullopt;
}

int64_t safetensors_dtype_size(DType d) {
  for (const auto& e : kDTypes) {
    if (e.dtype == d) return e.size;
  }
  return 1;
}

absl::Status validate_tensor_name(std::string_view name) {
  auto err = [&](const char* why) {
    std::string shown(name.substr(0, 80));
    return absl::InvalidArgumentError("tensor name \"" + shown + "\" " + why);
  };
  if (name.empty()) return absl::InvalidArgumentError("empty tensor name");
  if (name.size() > 1024) return err("is longer than 1024 bytes");
  if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos) {
    return err("contains a path separator");
  }
  if (name.find("..") != std::string_view::npos) return err("contains \"..\"");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7F) return err("contains a control character");
  }
  return absl::OkStatus();
}

const TensorInfo* SafetensorsHeader::find(std::string_view name) const {
  for (const TensorInfo& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<uint64_t> parse_header_size(const unsigned char first8[8], uint64_t file_size) {
  if (file_size < 8) return bad("file of ", file_size, " bytes is too small for a header size");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | first8[i];
  if (n > kMaxHeaderBytes) {
    return bad("header size ", n, " exceeds the limit of ", kMaxHeaderBytes, " bytes");
  }
  if (n > file_size - 8) {
    return bad("header size ", n, " exceeds the ", file_size - 8, " bytes after the size field");
  }
  if (n < 2) return bad("header size ", n, " is too small for a JSON object");
  return n;
}

static absl::StatusOr<TensorInfo> parse_entry(const std::string& name, const json& v,
                                              uint64_t buffer_size) {
  if (absl::Status s = validate_tensor_name(name); !s.ok()) return bad(s.message());
  TensorInfo t;
  t.name = name;
  if (!v.is_object()) return bad("entry \"", name, "\" is not an object");
  auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) return bad("entry \"", name, "\" has no string dtype");
  std::optional<DType> d = parse_safetensors_dtype(dt->get_ref<const std::string&>());
  if (!d) return bad("entry \"", name, "\" has unknown dtype \"", dt->get<std::string>(), "\"");
  t.dtype = *d;
  auto sh = v.find("shape");
  if (sh == v.end() || !sh->is_array()) return bad("entry \"", name, "\" has no shape array");
  if (sh->size() > 64) return bad("entry \"", name, "\" has ", sh->size(), " dims (max 64)");
  unsigned __int128 bytes = safetensors_dtype_size(t.dtype);
  for (const json& dim : *sh) {
    if (!dim.is_number_unsigned() || dim.get<uint64_t>() > kMaxDim) {
      return bad("entry \"", name, "\" has a bad dimension ", dim.dump());
    }
    uint64_t n = dim.get<uint64_t>();
    t.shape.push_back(static_cast<int64_t>(n));
    bytes *= n;
    if (bytes > kTooBig) bytes = kTooBig;  // saturate so the product cannot overflow
  }
  auto off = v.find("data_offsets");
  if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned()) {
    return bad("entry \"", name, "\" needs data_offsets [begin, end] of unsigned integers");
  }
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  if (t.begin > t.end || t.end > buffer_size) {
    return bad("entry \"", name, "\" has offsets [", t.begin, ", ", t.end,
               "] outside the data buffer of ", buffer_size, " bytes");
  }
  if (bytes != t.end - t.begin) {
    return bad("entry \"", name, "\" spans ", t.end - t.begin, " bytes but dtype ",
               safetensors_dtype_name(t.dtype), " and shape ", shape_str_local(t.shape), " need ",
               bytes >= kTooBig ? std::string("more than 2^64")
                                : std::to_string(static_cast<uint64_t>(bytes)));
  }
  for (const auto& [k, _] : v.items()) {
    if (k != "dtype" && k != "shape" && k != "data_offsets") {
      return bad("entry \"", name, "\" has an unknown field \"", k, "\"");
    }
  }
  return t;
}

absl::StatusOr<SafetensorsHeader> parse_header_json(std::string_view text, uint64_t buffer_size) {
  // nlohmann keeps the last of duplicate keys silently; the callback sees every key first.
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::key && depth == 1) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!seen.insert(k).second && duplicate.empty()) duplicate = k;
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text.begin(), text.end(), cb);
  } catch (const json::exception& e) {
    return bad("header is not valid JSON: ", e.what());
  }
  if (!duplicate.empty()) return bad("duplicate tensor name \"", duplicate.substr(0, 80), "\"");
  if (!root.is_object()) return bad("header is not a JSON object");
  SafetensorsHeader h;
  for (const auto& [name, v] : root.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) return bad("__metadata__ is not an object");
      for (const auto& [k, s] : v.items()) {
        if (!s.is_string()) return bad("__metadata__ value of \"", k, "\" is not a string");
        h.metadata[k] = s.get<std::string>();
      }
      continue;
    }
    absl::StatusOr<TensorInfo> t = parse_entry(name, v, buffer_size);
    if (!t.ok()) return t.status();
    h.tensors.push_back(std::move(*t));
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(),
                   [](const TensorInfo& a, const TensorInfo& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  uint64_t pos = 0;
  for (const TensorInfo& t : h.tensors) {
    if (t.begin < pos) return bad("tensor \"", t.name, "\" overlaps the tensor before it");
    if (t.begin > pos) return bad("hole in the data buffer before tensor \"", t.name, "\"");
    pos = t.end;
  }
  if (pos != buffer_size) {
    return bad("tensors cover ", pos, " bytes of a data buffer of ", buffer_size);
  }
  return h;
}

absl::StatusOr<SafetensorsHeader> parse_safetensors_bytes(std::string_view file) {
  if (file.size() < 8) return bad("file of ", file.size(), " bytes is too small for a header size");
  absl::StatusOr<uint64_t> n =
      parse_header_size(reinterpret_cast<const unsigned char*>(file.data()), file.size());
  if (!n.ok()) return n.status();
  absl::StatusOr<SafetensorsHeader> h = parse_header_json(file.substr(8, *n), file.size() - 8 - *n);
  if (h.ok()) h->data_start = 8 + *n;
  return h;
}

absl::Status write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                               const std::map<std::string, std::string>& metadata, bool sync) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t pos = 0;
  std::vector<uint64_t> sizes;
  for (const TensorView& t : tensors) {
    if (absl::Status s = validate_tensor_name(t.name); !s.ok()) return s;
    if (t.name == "__metadata__" || header.contains(t.name)) {
      return absl::InvalidArgumentError("duplicate or reserved tensor name \"" + t.name + "\"");
    }
    if (!parse_safetensors_dtype(safetensors_dtype_name(t.dtype))) {
      return absl::InvalidArgumentError(str_cat("safetensors: tensor \"", t.name, "\" has dtype ",
                                                dtype_name(t.dtype),
                                                ", which safetensors cannot hold"));
    }
    uint64_t n = safetensors_dtype_size(t.dtype);
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    header[t.name] = {{"dtype", safetensors_dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {pos, pos + n}}};
    sizes.push_back(n);
    pos += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the buffer 8-byte aligned, as Python does
  unsigned char size_le[8];
  for (int i = 0; i < 8; ++i) size_le[i] = static_cast<unsigned char>(text.size() >> (8 * i));

  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("open for writing", path);
  FdCloser closer(fd);
  absl::Status s = write_all(fd, size_le, 8, path);
  if (s.ok()) s = write_all(fd, text.data(), text.size(), path);
  for (size_t i = 0; s.ok() && i < tensors.size(); ++i) {
    s = write_all(fd, tensors[i].data, sizes[i], path);
  }
  if (s.ok() && sync && ::fsync(fd) != 0) s = errno_status("fsync", path);
  if (absl::Status c = closer.close(); s.ok()) s = c;
  return s;
}

absl::Status pread_exact(int fd, void* dst, uint64_t n, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, 1u << 30));
    ssize_t r = ::pread(fd, p, chunk, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status("read", path);
    }
    if (r == 0) return absl::DataLossError("safetensors: " + path + " ends early (truncated?)");
    p += r;
    n -= static_cast<uint64_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<SafetensorsReader> SafetensorsReader::open(const std::string& path) {
  SafetensorsReader r;
  r.path_ = path;
  r.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (r.fd_ < 0) return errno_status("open", path);
  struct stat st;
  if (::fstat(r.fd_, &st) != 0) return errno_status("stat", path);
  if (!S_ISREG(st.st_mode)) return absl::DataLossError(path + " is not a regular file");
  r.file_size_ = static_cast<uint64_t>(st.st_size);
  auto with_path = [&](const absl::Status& s) {
    return absl::Status(s.code(), std::string(s.message()) + " (" + path + ")");
  };
  unsigned char first8[8] = {};
  if (r.file_size_ >= 8) {
    if (absl::Status s = pread_exact(r.fd_, first8, 8, 0, path); !s.ok()) return s;
  }
  absl::StatusOr<uint64_t> n = parse_header_size(first8, r.file_size_);
  if (!n.ok()) return with_path(n.status());
  std::string text(*n, '\0');
  if (absl::Status s = pread_exact(r.fd_, text.data(), *n, 8, path); !s.ok()) return s;
  absl::StatusOr<SafetensorsHeader> h = parse_header_json(text, r.file_size_ - 8 - *n);
  if (!h.ok()) return with_path(h.status());
  r.header_ = std::move(*h);
  r.header_.data_start = 8 + *n;
  return r;
}

SafetensorsReader::SafetensorsReader(SafetensorsReader&& o) noexcept { *this = std::move(o); }

SafetensorsReader& SafetensorsReader::operator=(SafetensorsReader&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
    file_size_ = o.file_size_;
    path_ = std::move(o.path_);
    header_ = std::move(o.header_);
  }
  return *this;
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SafetensorsReader::read(const TensorInfo& t, void* dst) const {
  // The header was validated against the file size at open; re-check in case `t` is foreign.
  uint64_t start = header_.data_start + t.begin;
  if (t.end < t.begin || start < t.begin || start + (t.end - t.begin) > file_size_) {
    return absl::OutOfRangeError("safetensors: tensor \"" + t.name + "\" lies outside " + path_);
  }
  return pread_exact(fd_, dst, t.end - t.begin, start, path_);
}

}  // namespace graft::checkpoint
