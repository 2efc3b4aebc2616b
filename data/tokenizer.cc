#include "data/tokenizer.h"

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "data/atomic_file.h"
#include "data/bpe.h"
#include "data/hf_tokenizer.h"

namespace graft::data {

std::vector<int32_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) ids[i] = static_cast<unsigned char>(text[i]);
  return ids;
}

std::string ByteTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  s.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id > 256) fail("decode", "id ", id, " outside [0, 257) of the byte vocab");
    if (id == 256) {
      s += kEotText;
    } else {
      s.push_back(static_cast<char>(id));
    }
  }
  return s;
}

absl::Status ByteTokenizer::save(const std::string& path) const {
  return write_file_atomically(path, {"graft-byte 1\nvocab_size 257\nend\n"});
}

absl::StatusOr<std::unique_ptr<Tokenizer>> load_tokenizer(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("tokenizer file not found: " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.rfind("graft-bpe ", 0) == 0) {
    auto t = parse_bpe(text, path);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(std::make_unique<BpeTokenizer>(*std::move(t)));
  }
  if (text.rfind("graft-hf ", 0) == 0) {
    auto t = parse_hf_saved(text, path);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(*std::move(t));
  }
  if (text == "graft-byte 1\nvocab_size 257\nend\n") {
    return std::unique_ptr<Tokenizer>(std::make_unique<ByteTokenizer>());
  }
  if (text.rfind("graft-byte ", 0) == 0) {
    return absl::DataLossError(path + ": corrupt or truncated byte tokenizer file");
  }
  return absl::DataLossError(path +
                             ": not a graft tokenizer file (expected 'graft-bpe', "
                             "'graft-byte' or 'graft-hf' on the first line)");
}

}  // namespace graft::data
