#include "examples/train/tensorboard.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "checkpoint/crc32c.h"

namespace graft::train {
namespace {

// TFRecord stores masked CRC-32Cs (a CRC of data that contains CRCs is weak otherwise).
uint32_t masked_crc32c(const void* data, size_t n) {
  uint32_t crc = checkpoint::crc32c(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

// Minimal protobuf wire-format encoder: just what Event / Summary need.
enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, uint32_t field, Wire wire) { put_varint(out, (field << 3) | wire); }
void put_fixed(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}
void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, kBytes);
  put_varint(out, bytes.size());
  out += bytes;
}
void put_int64(std::string& out, uint32_t field, int64_t v) {
  put_tag(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(v));  // negative: ten bytes, as protobuf does
}
void put_double(std::string& out, uint32_t field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  put_tag(out, field, kFixed64);
  put_fixed(out, bits, 8);
}
void put_float(std::string& out, uint32_t field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  put_tag(out, field, kFixed32);
  put_fixed(out, bits, 4);
}

// Event fields.
constexpr uint32_t kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5;
// Summary.value = 1; Summary.Value fields.
constexpr uint32_t kSummaryValue = 1, kTag = 1, kSimpleValue = 2, kTensor = 8, kMetadata = 9;

std::string event_with_summary(double wall_time, int64_t step, const std::string& summary) {
  std::string event;
  put_double(event, kWallTime, wall_time);
  put_int64(event, kStep, step);
  put_bytes(event, kSummary, summary);
  return event;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == 0) return "localhost";
  return buf;
}

}  // namespace

namespace internal {

std::string encode_file_version_event(double wall_time) {
  std::string event;
  put_double(event, kWallTime, wall_time);
  put_bytes(event, kFileVersion, "brain.Event:2");
  return event;
}

std::string encode_scalars_event(double wall_time, int64_t step,
                                 const std::vector<std::pair<std::string, double>>& values) {
  std::string summary;
  for (const auto& [tag, value] : values) {
    std::string v;
    put_bytes(v, kTag, tag);
    put_float(v, kSimpleValue, static_cast<float>(value));
    put_bytes(summary, kSummaryValue, v);
  }
  return event_with_summary(wall_time, step, summary);
}

std::string encode_text_event(double wall_time, int64_t step, const std::string& tag,
                              const std::string& text) {
  // SummaryMetadata { plugin_data = 1: PluginData { plugin_name = 1: "text" } }
  std::string plugin_data, metadata;
  put_bytes(plugin_data, 1, "text");
  put_bytes(metadata, 1, plugin_data);
  // TensorProto { dtype = 1: DT_STRING (7), tensor_shape = 2: { dim = 2: { size = 1: 1 } },
  //               string_val = 8: text } -- the layout torch.utils.tensorboard writes.
  std::string dim, shape, tensor;
  put_int64(dim, 1, 1);
  put_bytes(shape, 2, dim);
  put_int64(tensor, 1, 7);
  put_bytes(tensor, 2, shape);
  put_bytes(tensor, 8, text);
  std::string v, summary;
  put_bytes(v, kTag, tag);
  put_bytes(v, kTensor, tensor);
  put_bytes(v, kMetadata, metadata);
  put_bytes(summary, kSummaryValue, v);
  return event_with_summary(wall_time, step, summary);
}

std::string frame_record(const std::string& payload) {
  std::string out;
  put_fixed(out, payload.size(), 8);
  put_fixed(out, masked_crc32c(out.data(), 8), 4);
  out += payload;
  put_fixed(out, masked_crc32c(payload.data(), payload.size()), 4);
  return out;
}

}  // namespace internal

void SummaryWriter::FileCloser::operator()(std::FILE* f) const {
  if (f) std::fclose(f);
}

absl::StatusOr<SummaryWriter> SummaryWriter::create(const std::string& logdir) {
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) {
    return absl::PermissionDeniedError("cannot create TensorBoard log dir " + logdir + ": " +
                                       ec.message());
  }
  std::string base =
      (std::filesystem::path(logdir) /
       ("events.out.tfevents." + std::to_string(std::time(nullptr)) + "." + hostname()))
          .string();
  // Two writers in the same second must not share a file: "x" fails if it exists.
  std::FILE* file = nullptr;
  std::string path;
  for (int n = 0; n < 1000 && file == nullptr; ++n) {
    path = n == 0 ? base : base + "." + std::to_string(n);
    file = std::fopen(path.c_str(), "wbx");
    if (file == nullptr && errno != EEXIST) {
      return absl::ErrnoToStatus(errno, "cannot create TensorBoard event file " + path);
    }
  }
  if (file == nullptr) return absl::AlreadyExistsError("too many event files named " + base);
  SummaryWriter writer(path, file);
  absl::Status s = writer.write_record(internal::encode_file_version_event(now_seconds()));
  if (s.ok()) s = writer.flush();
  if (!s.ok()) return s;
  return writer;
}

SummaryWriter::~SummaryWriter() { (void)close(); }

absl::Status SummaryWriter::write_record(const std::string& payload) {
  if (!file_) return absl::FailedPreconditionError("SummaryWriter for " + path_ + " is closed");
  std::string record = internal::frame_record(payload);
  if (std::fwrite(record.data(), 1, record.size(), file_.get()) != record.size()) {
    return absl::ErrnoToStatus(errno, "cannot write TensorBoard event file " + path_);
  }
  return absl::OkStatus();
}

absl::Status SummaryWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  return add_scalars({{tag, value}}, step);
}

absl::Status SummaryWriter::add_scalars(const std::vector<std::pair<std::string, double>>& values,
                                        int64_t step) {
  return write_record(internal::encode_scalars_event(now_seconds(), step, values));
}

absl::Status SummaryWriter::add_text(const std::string& tag, const std::string& text,
                                     int64_t step) {
  return write_record(internal::encode_text_event(now_seconds(), step, tag, text));
}

absl::Status SummaryWriter::flush() {
  if (!file_) return absl::FailedPreconditionError("SummaryWriter for " + path_ + " is closed");
  if (std::fflush(file_.get()) != 0) {
    return absl::ErrnoToStatus(errno, "cannot flush TensorBoard event file " + path_);
  }
  return absl::OkStatus();
}

absl::Status SummaryWriter::close() {
  if (!file_) return absl::OkStatus();
  absl::Status s = flush();
  if (std::fclose(file_.release()) != 0 && s.ok()) {
    s = absl::ErrnoToStatus(errno, "cannot close TensorBoard event file " + path_);
  }
  return s;
}

}  // namespace graft::train
