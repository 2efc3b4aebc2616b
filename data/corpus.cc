#include "data/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "data/rng.h"

namespace graft::data {
namespace fs = std::filesystem;

int64_t Corpus::total_bytes() const {
  int64_t n = 0;
  for (const auto& d : docs) n += static_cast<int64_t>(d.size());
  return n;
}

uint64_t Corpus::fingerprint() const {
  uint64_t h = fnv1a64(source);
  for (const auto& d : docs) {
    h = fnv1a64(d, h);
    h = mix64(h ^ d.size());  // boundaries count: {"ab"} != {"a","b"}
  }
  return h;
}

namespace {

absl::StatusOr<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError("read failed: " + p.string());
  return ss.str();
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
  });
}

// Calls f(line) for each line without its '\n' (a final line without '\n' included).
template <typename F>
void for_each_line(const std::string& text, F f) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    f(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
}

void push_doc(std::vector<std::string>& docs, std::string& cur) {
  while (!cur.empty() && (cur.back() == '\n' || cur.back() == '\r')) cur.pop_back();
  if (!cur.empty() && !is_blank(cur)) docs.push_back(cur);
  cur.clear();
}

// Documents are the runs of lines between separator lines (which belong to no document).
template <typename IsSeparator>
std::vector<std::string> split_at_lines(const std::string& text, IsSeparator is_separator) {
  std::vector<std::string> docs;
  std::string cur;
  for_each_line(text, [&](std::string_view line) {
    if (is_separator(line)) {
      push_doc(docs, cur);
    } else {
      cur.append(line);
      cur.push_back('\n');
    }
  });
  push_doc(docs, cur);
  return docs;
}

}  // namespace

std::string strip_overstrike(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\b') {
      if (!out.empty() && out.back() != '\n') out.pop_back();  // keep the character after \b
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string> split_fortune_records(const std::string& text) {
  return split_at_lines(text, [](std::string_view line) { return line == "%" || line == "%\r"; });
}

std::vector<std::string> split_paragraphs(const std::string& text) {
  return split_at_lines(text, is_blank);
}

absl::StatusOr<Corpus> load_fortunes(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError("default corpus missing: " + dir +
                               " not found (the Debian package `fortunes`); run "
                               "tools/bootstrap.sh, or pass a text file / directory instead");
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    // Regular files only (the .u8 names are symlinks to the same texts), no extension.
    if (e.is_symlink() || !e.is_regular_file() || e.path().has_extension()) continue;
    files.push_back(e.path());
  }
  if (ec) return absl::InternalError("cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  Corpus c{"fortunes:" + dir, {}};
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text.ok()) return text.status();
    for (auto& d : split_fortune_records(strip_overstrike(*text))) c.docs.push_back(std::move(d));
  }
  if (c.docs.empty()) {
    return absl::NotFoundError("default corpus " + dir +
                               " holds no fortunes; run tools/bootstrap.sh");
  }
  return c;
}

absl::StatusOr<Corpus> load_text_corpus(const std::string& path, bool paragraphs) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".txt") files.push_back(it->path());
    }
    if (ec) return absl::InternalError("cannot list " + path + ": " + ec.message());
    if (files.empty()) {
      return absl::NotFoundError(
          "no .txt or JSON Lines (.jsonl, .json, optionally .gz / .zst) "
          "files under " +
          path);
    }
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    return absl::NotFoundError("corpus not found: " + path);
  }
  Corpus c{path, {}};
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text.ok()) return text.status();
    if (paragraphs) {
      for (auto& d : split_paragraphs(*text)) c.docs.push_back(std::move(d));
    } else {
      std::string d = *text;
      push_doc(c.docs, d);
    }
  }
  if (c.docs.empty()) return absl::InvalidArgumentError("corpus has no text: " + path);
  return c;
}

absl::StatusOr<Corpus> load_corpus(const std::string& input, bool paragraphs) {
  if (input == "default" || input.empty()) return load_fortunes();
  return load_text_corpus(input, paragraphs);
}

}  // namespace graft::data
