// Text corpora as lists of documents. The default is the Debian `fortunes` package (about
// 2.5 MB of English in /usr/share/games/fortunes, one document per fortune); any text file or
// directory of .txt files can be used instead. Documents are raw bytes (no UTF-8 check).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graft::data {

inline constexpr char kFortunesDir[] = "/usr/share/games/fortunes";

struct Corpus {
  std::string source;             // "fortunes:<dir>" or the path that was read
  std::vector<std::string> docs;  // never empty strings
  int64_t total_bytes() const;
  uint64_t fingerprint() const;  // content hash (FNV-1a over docs and their boundaries)
};

// Every fortune of the package: the extensionless files of `dir` (the .dat files are indexes,
// the .u8 files links to the same text), in name order, split at lines holding only "%".
// Terminal overstriking ("_\bX", "X\bX", used for underline/bold) is reduced to the final
// character, and each record loses its trailing newline. NotFound with "run
// tools/bootstrap.sh" when the package is missing.
absl::StatusOr<Corpus> load_fortunes(const std::string& dir = kFortunesDir);

// Documents of a text file, or of every *.txt file under a directory (recursively, in path
// order). paragraphs=true: documents are paragraphs separated by blank (whitespace-only)
// lines; false: one document per file.
absl::StatusOr<Corpus> load_text_corpus(const std::string& path, bool paragraphs = true);

// "default" -> load_fortunes(); anything else -> load_text_corpus(path, paragraphs).
absl::StatusOr<Corpus> load_corpus(const std::string& input, bool paragraphs = true);

// Split helpers (exposed for tests).
std::vector<std::string> split_fortune_records(const std::string& text);
std::vector<std::string> split_paragraphs(const std::string& text);
std::string strip_overstrike(const std::string& text);

}  // namespace graft::data
