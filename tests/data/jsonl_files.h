// Writing JSON Lines test files: plain, gzip (zlib) and zstd, from the same lines.
#pragma once

#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace graft::data::testing_jsonl {

inline std::string jsonl_text(const std::vector<std::string>& docs) {
  std::string s;
  for (const auto& d : docs) s += nlohmann::json{{"id", s.size()}, {"text", d}}.dump() + "\n";
  return s;
}

inline std::string gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // +16: a gzip header
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace graft::data::testing_jsonl
