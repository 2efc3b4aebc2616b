#include "checkpoint/metadata.h"

#include <map>
#include <set>
#include <sstream>

#include "checkpoint/safetensors.h"
#include "core/error.h"

namespace graft::checkpoint {
namespace {

using json = nlohmann::json;

template <typename... P>
absl::Status bad(const P&... parts) {
  return absl::DataLossError(str_cat("checkpoint metadata: ", parts...));
}

// graft's short dtype names ("f32"), kept here so the parser needs no core library.
constexpr std::pair<DType, const char*> kNames[] = {
    {DType::kBool, "bool"}, {DType::kU8, "u8"},   {DType::kU32, "u32"},
    {DType::kI32, "i32"},   {DType::kI64, "i64"}, {DType::kF16, "f16"},
    {DType::kBF16, "bf16"}, {DType::kF32, "f32"}, {DType::kF64, "f64"},
    {DType::kC64, "c64"},   {DType::kC128, "c128"}, {DType::kI8, "i8"},
    {DType::kI16, "i16"},   {DType::kU16, "u16"},   {DType::kU64, "u64"},
    {DType::kF8E4M3FN, "f8_e4m3fn"}, {DType::kF8E5M2, "f8_e5m2"},
};

const char* short_name(DType d) {
  for (const auto& [t, n] : kNames) {
    if (t == d) return n;
  }
  return "?";
}

absl::StatusOr<TreeDef> treedef_rec(const json& j, int depth) {
  if (depth > kMaxTreeDepth) return bad("tree structure nested deeper than ", kMaxTreeDepth);
  if (!j.is_object()) return bad("tree node is not an object");
  auto kind = j.find("kind");
  if (kind == j.end() || !kind->is_string() || kind->get_ref<const std::string&>().empty()) {
    return bad("tree node has no kind");
  }
  TreeDef d;
  d.kind = kind->get<std::string>();
  auto keys = j.find("keys");
  auto children = j.find("children");
  if (d.kind == "*") {
    if ((keys != j.end() && !keys->empty()) || (children != j.end() && !children->empty())) {
      return bad("a leaf has keys or children");
    }
    d.num_leaves = 1;
    return d;
  }
  if (keys != j.end()) {
    if (!keys->is_array()) return bad("tree keys are not an array");
    for (const json& k : *keys) {
      if (!k.is_string()) return bad("tree key is not a string");
      d.keys.push_back(k.get<std::string>());
    }
  }
  if (children != j.end()) {
    if (!children->is_array()) return bad("tree children are not an array");
    for (const json& c : *children) {
      absl::StatusOr<TreeDef> cd = treedef_rec(c, depth + 1);
      if (!cd.ok()) return cd.status();
      d.num_leaves += cd->num_leaves;
      d.children.push_back(std::move(*cd));
    }
  }
  if (!d.keys.empty() && d.keys.size() != d.children.size()) {
    return bad("tree node ", d.kind, " has ", d.keys.size(), " keys for ", d.children.size(),
               " children");
  }
  return d;
}

// A leaf's "shards" (format 2): each a block of the leaf in some file, together tiling it.
absl::Status parse_shards(const json& arr, LeafMeta& l) {
  if (!arr.is_array() || arr.empty()) return bad("leaf \"", l.path, "\" has no shard list");
  const uint64_t esize = static_cast<uint64_t>(safetensors_dtype_size(l.dtype));
  std::vector<BlockIndex> blocks;
  for (const json& sj : arr) {
    if (!sj.is_object()) return bad("leaf \"", l.path, "\": a shard is not an object");
    ShardMeta s;
    auto file = sj.find("file");
    auto tensor = sj.find("tensor");
    auto index = sj.find("index");
    auto nb = sj.find("nbytes");
    auto crc = sj.find("crc32c");
    if (file == sj.end() || !file->is_string() || tensor == sj.end() || !tensor->is_string() ||
        index == sj.end() || !index->is_array() || nb == sj.end() || !nb->is_number_unsigned() ||
        crc == sj.end() || !crc->is_number_unsigned() || crc->get<uint64_t>() > 0xFFFFFFFFu) {
      return bad("leaf \"", l.path, "\": a shard needs file, tensor, index, nbytes and crc32c");
    }
    s.file = file->get<std::string>();
    s.tensor = tensor->get<std::string>();
    if (absl::Status st = validate_item_name(s.file); !st.ok()) return bad(st.message());
    if (absl::Status st = validate_tensor_name(s.tensor); !st.ok()) return bad(st.message());
    if (index->size() != l.shape.size()) {
      return bad("leaf \"", l.path, "\": shard \"", s.tensor, "\" has an index of rank ",
                 index->size(), " for a leaf of rank ", l.shape.size());
    }
    unsigned __int128 bytes = esize;
    for (const json& r : *index) {
      if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() ||
          !r[1].is_number_unsigned() || r[0].get<uint64_t>() > r[1].get<uint64_t>() ||
          r[1].get<uint64_t>() > (uint64_t{1} << 48)) {
        return bad("leaf \"", l.path, "\": shard \"", s.tensor, "\" has a bad index range");
      }
      s.index.emplace_back(r[0].get<int64_t>(), r[1].get<int64_t>());
      bytes *= r[1].get<uint64_t>() - r[0].get<uint64_t>();
      if (bytes > (uint64_t{1} << 62)) return bad("leaf \"", l.path, "\": shard too large");
    }
    // The name says where the block was written from: metadata that moved it (swapped two
    // blocks' positions) would load it into another place.
    if (s.tensor != shard_tensor_name(l.tensor, s.index)) {
      return bad("leaf \"", l.path, "\": shard \"", s.tensor, "\" is listed at ",
                 block_index_str(s.index), ", which its name does not say (",
                 shard_tensor_name(l.tensor, s.index), ")");
    }
    s.nbytes = nb->get<uint64_t>();
    if (s.nbytes != bytes) {
      return bad("leaf \"", l.path, "\": shard \"", s.tensor,
                 "\" nbytes disagrees with dtype and block");
    }
    s.crc32c = static_cast<uint32_t>(crc->get<uint64_t>());
    blocks.push_back(s.index);
    l.shards.push_back(std::move(s));
  }
  if (absl::Status st = check_shard_grid(l.shape, blocks); !st.ok()) {
    return bad("leaf \"", l.path, "\": ", st.message());
  }
  return absl::OkStatus();
}

absl::StatusOr<LeafMeta> parse_leaf(const json& j, bool sharded_format) {
  if (!j.is_object()) return bad("leaf entry is not an object");
  LeafMeta l;
  auto str = [&](const char* k, std::string& out) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  std::string dtype;
  if (!str("path", l.path) || !str("tensor", l.tensor) || !str("dtype", dtype) ||
      !str("sharding", l.sharding)) {
    return bad("leaf entry needs string path, tensor, dtype and sharding");
  }
  if (absl::Status s = validate_tensor_name(l.tensor); !s.ok()) return bad(s.message());
  bool found = false;
  for (const auto& [t, n] : kNames) {
    if (dtype == n) {
      l.dtype = t;
      found = true;
    }
  }
  if (!found) return bad("leaf \"", l.path, "\" has unknown dtype \"", dtype, "\"");
  auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array() || shape->size() > 64) {
    return bad("leaf \"", l.path, "\" has no valid shape");
  }
  unsigned __int128 bytes = safetensors_dtype_size(l.dtype);
  for (const json& d : *shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 48)) {
      return bad("leaf \"", l.path, "\" has a bad dimension");
    }
    l.shape.push_back(d.get<int64_t>());
    bytes *= d.get<uint64_t>();
    if (bytes > (uint64_t{1} << 62)) return bad("leaf \"", l.path, "\" is impossibly large");
  }
  auto nb = j.find("nbytes");
  auto crc = j.find("crc32c");
  auto shards = j.find("shards");
  if (shards != j.end() && !sharded_format) {
    return bad("leaf \"", l.path, "\" has shards, which format ", kFormat, " does not have");
  }
  // A split leaf's checksums are its blocks'; a whole one has its own.
  const bool whole = shards == j.end();
  if (nb == j.end() || !nb->is_number_unsigned() ||
      (whole &&
       (crc == j.end() || !crc->is_number_unsigned() || crc->get<uint64_t>() > 0xFFFFFFFFu))) {
    return bad("leaf \"", l.path, "\" needs unsigned nbytes and crc32c");
  }
  l.nbytes = nb->get<uint64_t>();
  if (l.nbytes != bytes) return bad("leaf \"", l.path, "\" nbytes disagrees with dtype and shape");
  if (whole) {
    l.crc32c = static_cast<uint32_t>(crc->get<uint64_t>());
  } else if (absl::Status s = parse_shards(*shards, l); !s.ok()) {
    return s;
  }
  return l;
}

}  // namespace

const ItemMeta* StepMetadata::find(std::string_view name) const {
  for (const ItemMeta& i : items) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

std::string tensor_name_for_path(const std::string& path) { return path.empty() ? "value" : path; }

absl::Status validate_item_name(std::string_view name) {
  if (absl::Status s = validate_tensor_name(name); !s.ok()) return s;
  if (name[0] == '_' || name[0] == '.') {
    return absl::InvalidArgumentError("item name \"" + std::string(name) +
                                      "\" may not start with '_' or '.'");
  }
  return absl::OkStatus();
}

json treedef_to_json(const TreeDef& def) {
  json j = {{"kind", def.kind}};
  if (def.kind == "*") return j;
  j["keys"] = def.keys;
  json ch = json::array();
  for (const TreeDef& c : def.children) ch.push_back(treedef_to_json(c));
  j["children"] = std::move(ch);
  return j;
}

absl::StatusOr<TreeDef> treedef_from_json(const json& j) { return treedef_rec(j, 0); }

std::string metadata_to_json(const StepMetadata& m) {
  json items = json::array();
  for (const ItemMeta& it : m.items) {
    if (it.is_json) {
      items.push_back({{"name", it.name}, {"kind", "json"}, {"value", it.value}});
      continue;
    }
    json leaves = json::array();
    for (const LeafMeta& l : it.leaves) {
      json lj = {{"path", l.path},   {"tensor", l.tensor},     {"dtype", short_name(l.dtype)},
                 {"shape", l.shape}, {"sharding", l.sharding}, {"nbytes", l.nbytes}};
      if (l.shards.empty()) {
        lj["crc32c"] = l.crc32c;
      } else {
        json sj = json::array();
        for (const ShardMeta& s : l.shards) {
          json index = json::array();
          for (const auto& [a, z] : s.index) index.push_back({a, z});
          sj.push_back({{"file", s.file},
                        {"tensor", s.tensor},
                        {"index", std::move(index)},
                        {"nbytes", s.nbytes},
                        {"crc32c", s.crc32c}});
        }
        lj["shards"] = std::move(sj);
      }
      leaves.push_back(std::move(lj));
    }
    items.push_back({{"name", it.name},
                     {"kind", "tree"},
                     {"file", it.file()},
                     {"treedef", treedef_to_json(it.treedef)},
                     {"leaves", std::move(leaves)}});
  }
  json j = {{"format", m.format},       {"graft_version", m.graft_version},
            {"step", m.step},           {"timestamp_ms", m.timestamp_ms},
            {"metrics", m.metrics},     {"user_metadata", m.user_metadata},
            {"items", std::move(items)}};
  return j.dump(1);
}

absl::StatusOr<StepMetadata> parse_metadata(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return bad("not valid JSON: ", e.what());
  }
  if (!j.is_object()) return bad("not a JSON object");
  StepMetadata m;
  auto fmt = j.find("format");
  if (fmt == j.end() || !fmt->is_string() ||
      (fmt->get<std::string>() != kFormat && fmt->get<std::string>() != kFormatSharded)) {
    return bad("format is not \"", kFormat, "\" or \"", kFormatSharded, "\"");
  }
  m.format = fmt->get<std::string>();
  const bool sharded_format = m.format == kFormatSharded;
  auto ver = j.find("graft_version");
  auto step = j.find("step");
  auto ts = j.find("timestamp_ms");
  auto items = j.find("items");
  if (ver == j.end() || !ver->is_string() || step == j.end() || !step->is_number_integer() ||
      ts == j.end() || !ts->is_number_integer() || items == j.end() || !items->is_array()) {
    return bad("needs graft_version, integer step and timestamp_ms, and an items array");
  }
  m.graft_version = ver->get<std::string>();
  m.step = step->get<int64_t>();
  if (m.step < 0) return bad("negative step");
  m.timestamp_ms = ts->get<int64_t>();
  if (auto it = j.find("metrics"); it != j.end()) m.metrics = *it;
  if (auto it = j.find("user_metadata"); it != j.end()) m.user_metadata = *it;
  std::set<std::string> names;
  for (const json& ij : *items) {
    if (!ij.is_object()) return bad("item is not an object");
    auto name = ij.find("name");
    auto kind = ij.find("kind");
    if (name == ij.end() || !name->is_string() || kind == ij.end() || !kind->is_string()) {
      return bad("item needs a string name and kind");
    }
    ItemMeta item;
    item.name = name->get<std::string>();
    if (absl::Status s = validate_item_name(item.name); !s.ok()) return bad(s.message());
    if (!names.insert(item.name).second) return bad("duplicate item \"", item.name, "\"");
    const std::string& k = kind->get_ref<const std::string&>();
    if (k == "json") {
      auto v = ij.find("value");
      if (v == ij.end()) return bad("json item \"", item.name, "\" has no value");
      item.is_json = true;
      item.value = *v;
    } else if (k == "tree") {
      auto td = ij.find("treedef");
      auto leaves = ij.find("leaves");
      if (td == ij.end() || leaves == ij.end() || !leaves->is_array()) {
        return bad("tree item \"", item.name, "\" needs treedef and leaves");
      }
      absl::StatusOr<TreeDef> def = treedef_from_json(*td);
      if (!def.ok()) return def.status();
      item.treedef = std::move(*def);
      std::set<std::string> tensors;
      std::set<std::pair<std::string, std::string>> stored;  // (file, tensor): each read once
      for (const json& lj : *leaves) {
        absl::StatusOr<LeafMeta> l = parse_leaf(lj, sharded_format);
        if (!l.ok()) return l.status();
        if (!tensors.insert(l->tensor).second) return bad("duplicate tensor \"", l->tensor, "\"");
        if (l->shards.empty() && !stored.insert({item.file(), l->tensor}).second) {
          return bad("tensor \"", l->tensor, "\" of ", item.file(), " is listed twice");
        }
        for (const ShardMeta& s : l->shards) {
          if (!stored.insert({s.file, s.tensor}).second) {
            return bad("tensor \"", s.tensor, "\" of ", s.file, " is listed twice");
          }
        }
        item.leaves.push_back(std::move(*l));
      }
      if (static_cast<int64_t>(item.leaves.size()) != item.treedef.num_leaves) {
        return bad("item \"", item.name, "\" lists ", item.leaves.size(),
                   " leaves but its structure has ", item.treedef.num_leaves);
      }
    } else {
      return bad("item \"", item.name, "\" has unknown kind \"", k, "\"");
    }
    m.items.push_back(std::move(item));
  }
  return m;
}

}  // namespace graft::checkpoint
