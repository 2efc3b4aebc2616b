#include "data/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "data/atomic_file.h"

namespace graft::data {
namespace {

static_assert(std::endian::native == std::endian::little,
              "token files are little-endian; add byte swaps for a big-endian host");

template <typename T>
void put(std::string& s, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  s.append(b, sizeof(T));
}

template <typename T>
T get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

absl::Status write_token_file(const std::string& path, const std::vector<int32_t>& tokens,
                              int64_t vocab_size) {
  if (vocab_size <= 0 || vocab_size > (int64_t{1} << 31)) {
    return absl::InvalidArgumentError("vocab_size out of range: " + std::to_string(vocab_size));
  }
  const int width = token_width_for(vocab_size);
  std::string header(kTokenMagic, 8);
  put<uint32_t>(header, kTokenFileVersion);
  put<uint32_t>(header, static_cast<uint32_t>(width));
  put<uint64_t>(header, tokens.size());
  put<uint32_t>(header, static_cast<uint32_t>(vocab_size));
  put<uint32_t>(header, 0);
  std::string body;
  body.reserve(tokens.size() * width);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t t = tokens[i];
    if (t < 0 || t >= vocab_size) {
      return absl::InvalidArgumentError("token " + std::to_string(t) + " at " + std::to_string(i) +
                                        " outside [0, " + std::to_string(vocab_size) + ")");
    }
    if (width == 2) {
      put<uint16_t>(body, static_cast<uint16_t>(t));
    } else {
      put<uint32_t>(body, static_cast<uint32_t>(t));
    }
  }
  return write_file_atomically(path, {header, body});
}

absl::StatusOr<std::shared_ptr<const TokenFile>> TokenFile::open(const std::string& path,
                                                                 bool verify_ids) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError("token file not found: " + path);
    return absl::PermissionDeniedError("cannot open " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError("not a regular file: " + path);
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  if (bytes < static_cast<size_t>(kTokenHeaderBytes)) {
    ::close(fd);
    return absl::DataLossError(path + ": truncated header (" + std::to_string(bytes) +
                               " bytes < 32)");
  }
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return absl::InternalError("mmap failed: " + path);
  std::shared_ptr<TokenFile> f(new TokenFile());
  f->path_ = path;
  f->map_ = map;
  f->map_bytes_ = bytes;
  const auto* p = static_cast<const unsigned char*>(map);
  if (std::memcmp(p, kTokenMagic, 8) != 0) {
    return absl::DataLossError(path + ": bad magic (not a GRAFTTOK token file)");
  }
  const auto version = get<uint32_t>(p + 8);
  if (version != kTokenFileVersion) {
    return absl::InvalidArgumentError(path + ": unsupported version " + std::to_string(version));
  }
  f->width_ = static_cast<int>(get<uint32_t>(p + 12));
  const auto count = get<uint64_t>(p + 16);
  f->vocab_size_ = get<uint32_t>(p + 24);
  if (f->width_ != 2 && f->width_ != 4) {
    return absl::InvalidArgumentError(path + ": element width " + std::to_string(f->width_) +
                                      " (expected 2 or 4)");
  }
  if (f->vocab_size_ <= 0 || f->width_ < token_width_for(f->vocab_size_)) {
    return absl::InvalidArgumentError(path + ": width " + std::to_string(f->width_) +
                                      " cannot hold vocab_size " + std::to_string(f->vocab_size_));
  }
  const size_t body = bytes - static_cast<size_t>(kTokenHeaderBytes);
  if (count > body / static_cast<size_t>(f->width_) ||
      count * static_cast<size_t>(f->width_) != body) {
    return absl::DataLossError(path + ": header says " + std::to_string(count) + " tokens of " +
                               std::to_string(f->width_) + " bytes but the file holds " +
                               std::to_string(body) + " bytes of tokens (truncated?)");
  }
  f->count_ = static_cast<int64_t>(count);
  f->data_ = p + kTokenHeaderBytes;
  if (verify_ids) {
    for (int64_t i = 0; i < f->count_; ++i) {
      const int32_t t = f->at(i);
      if (t < 0 || t >= f->vocab_size_) {
        return absl::DataLossError(path + ": token " + std::to_string(t) + " at " +
                                   std::to_string(i) + " >= vocab_size " +
                                   std::to_string(f->vocab_size_));
      }
    }
  }
  return std::shared_ptr<const TokenFile>(std::move(f));
}

TokenFile::~TokenFile() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

int32_t TokenFile::at(int64_t i) const {
  const unsigned char* p = data_ + i * width_;
  return width_ == 2 ? static_cast<int32_t>(get<uint16_t>(p))
                     : static_cast<int32_t>(get<uint32_t>(p));
}

void TokenFile::read(int64_t start, int64_t n, int32_t* out) const {
  if (start < 0 || n < 0 || start + n > count_) {
    fail("TokenFile", "read [", start, ", ", start + n, ") outside [0, ", count_, ") of ", path_);
  }
  for (int64_t i = 0; i < n; ++i) out[i] = at(start + i);
}

std::vector<int32_t> TokenFile::read_all() const {
  std::vector<int32_t> v(static_cast<size_t>(count_));
  read(0, count_, v.data());
  return v;
}

}  // namespace graft::data

namespace graft::data {
namespace {

constexpr size_t kWriterBuffer = size_t{1} << 20;

absl::Status pwrite_all(int fd, const char* p, size_t n, int64_t offset, const std::string& what) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, offset);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_status("writing " + what, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += w;
  }
  return absl::OkStatus();
}

absl::Status pread_all(int fd, char* p, size_t n, int64_t offset, const std::string& what) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, offset);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return errno_status("reading back " + what, r < 0 ? errno : EIO);
    p += r;
    n -= static_cast<size_t>(r);
    offset += r;
  }
  return absl::OkStatus();
}

std::string header_for(int width, uint64_t count, int64_t vocab_size) {
  std::string header(kTokenMagic, 8);
  put<uint32_t>(header, kTokenFileVersion);
  put<uint32_t>(header, static_cast<uint32_t>(width));
  put<uint64_t>(header, count);
  put<uint32_t>(header, static_cast<uint32_t>(vocab_size));
  put<uint32_t>(header, 0);
  return header;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenFileWriter>> TokenFileWriter::create(const std::string& path,
                                                                         int64_t vocab_size) {
  if (vocab_size <= 0 || vocab_size > (int64_t{1} << 31)) {
    return absl::InvalidArgumentError("vocab_size out of range: " + std::to_string(vocab_size));
  }
  std::unique_ptr<TokenFileWriter> w(new TokenFileWriter());
  w->path_ = path;
  w->tmp_ = temp_path_for(path);
  w->width_ = token_width_for(vocab_size);
  w->vocab_size_ = vocab_size;
  w->fd_ = ::open(w->tmp_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w->fd_ < 0) return errno_status("cannot create " + w->tmp_, errno);
  const std::string header = header_for(w->width_, 0, vocab_size);
  if (auto s = pwrite_all(w->fd_, header.data(), header.size(), 0, w->tmp_); !s.ok()) {
    return w->fail(s);
  }
  w->buffer_.reserve(kWriterBuffer + 64);
  return w;
}

TokenFileWriter::~TokenFileWriter() {
  if (fd_ >= 0) (void)fail(absl::OkStatus());
}

absl::Status TokenFileWriter::fail(absl::Status s) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  return s;
}

absl::Status TokenFileWriter::flush() {
  if (fd_ < 0) return absl::FailedPreconditionError(path_ + ": writer already closed");
  const int64_t offset = kTokenHeaderBytes + written_ * width_;
  if (auto s = pwrite_all(fd_, buffer_.data(), buffer_.size(), offset, tmp_); !s.ok()) {
    return fail(s);
  }
  written_ = count_;
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status TokenFileWriter::append(const std::vector<int32_t>& ids) {
  if (fd_ < 0) return absl::FailedPreconditionError(path_ + ": writer already closed");
  for (int32_t t : ids) {
    if (t < 0 || t >= vocab_size_) {
      return fail(absl::InvalidArgumentError(path_ + ": token " + std::to_string(t) + " at " +
                                             std::to_string(count_) + " outside [0, " +
                                             std::to_string(vocab_size_) + ")"));
    }
    if (width_ == 2) {
      put<uint16_t>(buffer_, static_cast<uint16_t>(t));
    } else {
      put<uint32_t>(buffer_, static_cast<uint32_t>(t));
    }
    ++count_;
  }
  return buffer_.size() >= kWriterBuffer ? flush() : absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>> TokenFileWriter::cut(int64_t start, int64_t n) {
  if (start < 0 || n < 0 || start + n > count_) {
    return absl::InvalidArgumentError(path_ + ": cut outside the tokens written");
  }
  if (auto s = flush(); !s.ok()) return s;
  auto at = [&](int64_t i) { return kTokenHeaderBytes + i * width_; };
  std::string bytes(static_cast<size_t>(n * width_), '\0');
  if (auto s = pread_all(fd_, bytes.data(), bytes.size(), at(start), tmp_); !s.ok()) {
    return fail(s);
  }
  std::vector<int32_t> removed(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data()) + i * width_;
    removed[i] = width_ == 2 ? get<uint16_t>(p) : static_cast<int32_t>(get<uint32_t>(p));
  }
  std::string chunk;
  for (int64_t from = start + n; from < count_;) {  // front to back: never overwrites unread
    const int64_t k = std::min<int64_t>(count_ - from, kWriterBuffer / width_);
    chunk.resize(static_cast<size_t>(k * width_));
    if (auto s = pread_all(fd_, chunk.data(), chunk.size(), at(from), tmp_); !s.ok()) {
      return fail(s);
    }
    if (auto s = pwrite_all(fd_, chunk.data(), chunk.size(), at(from - n), tmp_); !s.ok()) {
      return fail(s);
    }
    from += k;
  }
  count_ -= n;
  written_ = count_;
  if (::ftruncate(fd_, at(count_)) != 0) return fail(errno_status("truncating " + tmp_, errno));
  return removed;
}

absl::Status TokenFileWriter::finish() {
  if (auto s = flush(); !s.ok()) return s;
  const std::string header = header_for(width_, static_cast<uint64_t>(count_), vocab_size_);
  if (auto s = pwrite_all(fd_, header.data(), header.size(), 0, tmp_); !s.ok()) return fail(s);
  if (::fsync(fd_) != 0) return fail(errno_status("fsync " + tmp_, errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    ::unlink(tmp_.c_str());
    return errno_status("closing " + tmp_, errno);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const absl::Status s = errno_status("rename " + tmp_ + " -> " + path_, errno);
    ::unlink(tmp_.c_str());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace graft::data
