// SummaryWriter: TensorBoard event files without TensorFlow or protobuf.
//
// A file `events.out.tfevents.<unix seconds>.<hostname>` in `logdir` holds TFRecords: u64
// length (little endian), u32 masked CRC-32C of the length bytes, the payload, u32 masked
// CRC-32C of the payload. Each payload is a hand-encoded tensorflow.Event protobuf; the first
// one carries file_version "brain.Event:2", the others a Summary of scalars or text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graft::train {

class SummaryWriter {
 public:
  // Creates logdir (and parents) and the event file, and writes the file_version record.
  static absl::StatusOr<SummaryWriter> create(const std::string& logdir);

  SummaryWriter(SummaryWriter&&) = default;
  SummaryWriter& operator=(SummaryWriter&&) = default;
  ~SummaryWriter();  // flushes and closes

  // One Event {wall_time, step, summary {value {tag, simple_value}}}.
  absl::Status add_scalar(const std::string& tag, double value, int64_t step);
  // Several scalars in one Event (one record; TensorBoard shows them as separate tags).
  absl::Status add_scalars(const std::vector<std::pair<std::string, double>>& values, int64_t step);
  // A text summary (TensorBoard's Text tab): a DT_STRING tensor with plugin "text".
  absl::Status add_text(const std::string& tag, const std::string& text, int64_t step);
  absl::Status flush();
  absl::Status close();  // flushes; later calls return FailedPreconditionError

  const std::string& path() const { return path_; }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const;
  };
  SummaryWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  absl::Status write_record(const std::string& payload);

  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

// Exposed for tests and other writers: the Event protobuf bytes.
namespace internal {
std::string encode_file_version_event(double wall_time);
std::string encode_scalars_event(double wall_time, int64_t step,
                                 const std::vector<std::pair<std::string, double>>& values);
std::string encode_text_event(double wall_time, int64_t step, const std::string& tag,
                              const std::string& text);
std::string frame_record(const std::string& payload);  // TFRecord framing
}  // namespace internal

}  // namespace graft::train
