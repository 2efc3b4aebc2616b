#include "data/jsonl.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "data/rng.h"

namespace graft::data {
namespace fs = std::filesystem;
namespace {

constexpr size_t kChunk = size_t{1} << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

}  // namespace

bool is_jsonl_name(const std::string& path) {
  for (const char* ext : {".jsonl", ".json"}) {
    for (const char* z : {"", ".gz", ".zst"}) {
      if (ends_with(path, std::string(ext) + z)) return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> find_jsonl_files(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_regular_file(path, ec)) {
    if (is_jsonl_name(path)) files.push_back(path);
    return files;
  }
  if (!fs::is_directory(path, ec)) return files;  // the text reader reports what is missing
  bool has_txt = false;
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string p = it->path().string();
    if (is_jsonl_name(p)) files.push_back(p);
    has_txt |= it->path().extension() == ".txt";
  }
  if (ec) return absl::InternalError("cannot list " + path + ": " + ec.message());
  if (!files.empty() && has_txt) {
    return absl::InvalidArgumentError(
        path + " holds both JSON Lines and .txt files; point the dataset at one kind");
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<uint64_t> jsonl_fingerprint(const std::vector<std::string>& files) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const std::string& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) {
      return absl::NotFoundError("cannot stat " + f + ": " + std::strerror(errno));
    }
    h = fnv1a64(f, h);
    h = mix64(h ^ static_cast<uint64_t>(st.st_size));
    h = mix64(h ^ static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull ^
              static_cast<uint64_t>(st.st_mtim.tv_nsec));
  }
  return h;
}

absl::StatusOr<JsonlDocuments> JsonlDocuments::open(std::vector<std::string> files) {
  if (files.empty()) return absl::InvalidArgumentError("no JSON Lines files to read");
  JsonlDocuments d;
  for (const std::string& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    if (ec) return absl::NotFoundError("cannot read " + f + ": " + ec.message());
    d.total_bytes_ += static_cast<int64_t>(size);
  }
  d.files_ = std::move(files);
  d.chunk_.resize(kChunk);
  return d;
}

int64_t JsonlDocuments::file_bytes_read() const {
  return done_bytes_ + (reader_ ? reader_->file_bytes_read() : 0);
}

const std::string& JsonlDocuments::current_file() const {
  return files_[std::min(file_index_, files_.size() - 1)];
}

absl::StatusOr<bool> JsonlDocuments::next_line() {
  line_.clear();
  bool any = false;
  while (true) {
    if (chunk_pos_ == chunk_end_) {
      if (file_done_) break;
      auto got = reader_->read(chunk_.data(), chunk_.size());
      if (!got.ok()) return got.status();
      chunk_pos_ = 0;
      chunk_end_ = *got;
      if (*got == 0) {
        file_done_ = true;
        break;
      }
    }
    any = true;
    const char* start = chunk_.data() + chunk_pos_;
    const size_t left = chunk_end_ - chunk_pos_;
    const void* nl = std::memchr(start, '\n', left);
    const size_t take = nl ? static_cast<const char*>(nl) - start : left;
    if (line_.size() + take > kMaxJsonlLineBytes) {
      return absl::InvalidArgumentError(reader_->path() + ":" + std::to_string(line_no_ + 1) +
                                        ": line longer than " +
                                        std::to_string(kMaxJsonlLineBytes >> 20) + " MiB");
    }
    line_.append(start, take);
    chunk_pos_ += take;
    if (nl) {
      ++chunk_pos_;
      break;
    }
  }
  if (!any) return false;
  ++line_no_;
  return true;
}

absl::StatusOr<bool> JsonlDocuments::next(std::string& doc) {
  while (file_index_ < files_.size()) {
    if (!reader_) {
      auto r = CompressedReader::open(files_[file_index_]);
      if (!r.ok()) return r.status();
      reader_ = *std::move(r);
      line_no_ = 0;
      chunk_pos_ = chunk_end_ = 0;
      file_done_ = false;
    }
    auto more = next_line();
    if (!more.ok()) return more.status();
    if (!*more) {
      done_bytes_ += reader_->file_bytes_read();
      reader_.reset();
      ++file_index_;
      continue;
    }
    if (blank(line_)) continue;
    const std::string where = files_[file_index_] + ":" + std::to_string(line_no_);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line_);
    } catch (const nlohmann::json::exception& e) {
      return absl::InvalidArgumentError(where + ": malformed JSON: " + e.what());
    }
    if (!j.is_object()) {
      return absl::InvalidArgumentError(where + ": expected a JSON object with a string \"text\"");
    }
    auto text = j.find("text");
    if (text == j.end() || !text->is_string()) {
      return absl::InvalidArgumentError(
          where + (text == j.end() ? ": no \"text\" field" : ": \"text\" is not a string"));
    }
    if (text->get_ref<const std::string&>().empty()) continue;
    doc = std::move(text->get_ref<std::string&>());
    return true;
  }
  return false;
}

}  // namespace graft::data
