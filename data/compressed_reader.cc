#include "data/compressed_reader.h"

#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace graft::data {
namespace {

constexpr size_t kChunk = size_t{1} << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The raw bytes of the file, a chunk at a time.
class FileInput {
 public:
  explicit FileInput(std::FILE* f) : f_(f) {}
  ~FileInput() { std::fclose(f_); }
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;

  // Reads up to n bytes; 0 at the end of the file. Internal on an I/O error.
  absl::StatusOr<size_t> read(char* buf, size_t n, const std::string& path, int64_t& counted) {
    const size_t got = std::fread(buf, 1, n, f_);
    if (got < n && std::ferror(f_)) {
      return absl::DataLossError("read failed: " + path + ": " + std::strerror(errno));
    }
    counted += static_cast<int64_t>(got);
    return got;
  }

 private:
  std::FILE* f_;
};

class PlainReader final : public CompressedReader {
 public:
  PlainReader(std::string path, std::FILE* f) : CompressedReader(std::move(path)), in_(f) {}
  absl::StatusOr<size_t> read(char* buf, size_t n) override {
    return in_.read(buf, n, path_, file_bytes_read_);
  }

 private:
  FileInput in_;
};

class GzipReader final : public CompressedReader {
 public:
  GzipReader(std::string path, std::FILE* f)
      : CompressedReader(std::move(path)), in_(f), buffer_(kChunk) {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;  // 15 + 32: a gzip or zlib header
  }
  ~GzipReader() override { inflateEnd(&z_); }

  absl::StatusOr<size_t> read(char* buf, size_t n) override {
    if (!ok_) return absl::InternalError(path_ + ": zlib failed to initialize");
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, kChunk));
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0) {
        auto got = in_.read(buffer_.data(), buffer_.size(), path_, file_bytes_read_);
        if (!got.ok()) return got.status();
        if (*got == 0) {
          if (in_member_ || !started_) {
            return absl::DataLossError(path_ + ": truncated gzip data (the file ends " +
                                       (started_ ? "inside a compressed member)" : "before one)"));
          }
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(buffer_.data());
        z_.avail_in = static_cast<uInt>(*got);
      }
      if (!in_member_) {  // another member follows the previous one
        if (inflateReset(&z_) != Z_OK) return absl::InternalError(path_ + ": inflateReset");
        in_member_ = started_ = true;
      }
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        in_member_ = false;
      } else if (r != Z_OK && r != Z_BUF_ERROR) {
        return absl::DataLossError(
            path_ + ": corrupt gzip data: " +
            (z_.msg != nullptr ? z_.msg : "inflate error " + std::to_string(r)));
      }
    }
    return static_cast<size_t>(reinterpret_cast<char*>(z_.next_out) - buf);
  }

 private:
  FileInput in_;
  std::vector<char> buffer_;
  z_stream z_;
  bool ok_ = false;
  bool in_member_ = false;  // inside a gzip member whose end has not been seen
  bool started_ = false;    // a member has begun (an empty file is not gzip data)
};

class ZstdReader final : public CompressedReader {
 public:
  ZstdReader(std::string path, std::FILE* f)
      : CompressedReader(std::move(path)), in_(f), buffer_(ZSTD_DStreamInSize()) {
    ctx_ = ZSTD_createDCtx();
  }
  ~ZstdReader() override { ZSTD_freeDCtx(ctx_); }

  absl::StatusOr<size_t> read(char* buf, size_t n) override {
    if (ctx_ == nullptr) return absl::InternalError(path_ + ": ZSTD_createDCtx failed");
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos < out.size) {
      if (input_.pos == input_.size) {
        auto got = in_.read(buffer_.data(), buffer_.size(), path_, file_bytes_read_);
        if (!got.ok()) return got.status();
        if (*got == 0) {
          if (in_frame_ || !started_) {
            return absl::DataLossError(path_ + ": truncated zstd data (the file ends " +
                                       (started_ ? "inside a frame)" : "before one)"));
          }
          break;
        }
        input_ = {buffer_.data(), *got, 0};
      }
      const size_t r = ZSTD_decompressStream(ctx_, &out, &input_);
      if (ZSTD_isError(r)) {
        return absl::DataLossError(path_ + ": corrupt zstd data: " + ZSTD_getErrorName(r));
      }
      in_frame_ = r != 0;  // 0: a frame was completed and flushed
      started_ = true;
    }
    return out.pos;
  }

 private:
  FileInput in_;
  std::vector<char> buffer_;
  ZSTD_DCtx* ctx_ = nullptr;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  bool in_frame_ = false;
  bool started_ = false;  // data was decoded (an empty file is not zstd data)
};

}  // namespace

absl::StatusOr<std::unique_ptr<CompressedReader>> CompressedReader::open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int e = errno;
    const std::string msg = "cannot open " + path + ": " + std::strerror(e);
    if (e == ENOENT) return absl::NotFoundError(msg);
    if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(msg);
    return absl::InternalError(msg);
  }
  if (ends_with(path, ".gz")) return std::unique_ptr<CompressedReader>(new GzipReader(path, f));
  if (ends_with(path, ".zst")) return std::unique_ptr<CompressedReader>(new ZstdReader(path, f));
  return std::unique_ptr<CompressedReader>(new PlainReader(path, f));
}

}  // namespace graft::data
