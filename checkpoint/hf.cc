#include "checkpoint/hf.h"

#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "checkpoint/file_util.h"
#include "checkpoint/safetensors.h"
#include "core/error.h"
#include "core/ops.h"
#include "nlohmann/json.hpp"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;

std::string layer_name(const std::string& tmpl, int64_t i) {
  std::string out = tmpl;
  size_t pos = out.find("{i}");
  if (pos != std::string::npos) out.replace(pos, 3, std::to_string(i));
  return out;
}

Shape swap_last_two(Shape s) {
  if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

Array swap_last_two(const Array& a) {
  std::vector<int> perm(a.ndim());
  for (int i = 0; i < a.ndim(); ++i) perm[i] = i;
  std::swap(perm[a.ndim() - 1], perm[a.ndim() - 2]);
  return transpose(a, perm);
}

// The open files of an HF checkpoint and which file holds each tensor.
struct HfSource {
  std::vector<std::unique_ptr<SafetensorsReader>> files;
  std::map<std::string, std::pair<SafetensorsReader*, const TensorInfo*>> tensors;

  absl::Status add_file(const std::string& path) {
    absl::StatusOr<SafetensorsReader> r = SafetensorsReader::open(path);
    if (!r.ok()) return r.status();
    files.push_back(std::make_unique<SafetensorsReader>(std::move(*r)));
    for (const TensorInfo& t : files.back()->header().tensors) {
      if (!tensors.emplace(t.name, std::make_pair(files.back().get(), &t)).second) {
        return absl::DataLossError(str_cat("tensor \"", t.name, "\" appears in two files"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status open(const std::string& source) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) return add_file(source);
    std::string index = source + "/model.safetensors.index.json";
    if (!fs::exists(index, ec)) return add_file(source + "/model.safetensors");
    std::string text;
    if (absl::Status s = read_file(index, text, 64u << 20); !s.ok()) return s;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
      return absl::DataLossError(index + " has no weight_map object");
    }
    std::set<std::string> shards;
    for (const auto& [name, file] : j["weight_map"].items()) {
      if (!file.is_string()) return absl::DataLossError(index + ": weight_map value not a string");
      const std::string& f = file.get_ref<const std::string&>();
      if (absl::Status s = validate_tensor_name(f); !s.ok()) {
        return absl::DataLossError(index + ": bad shard file name: " + std::string(s.message()));
      }
      shards.insert(f);
    }
    for (const std::string& f : shards) {
      if (absl::Status s = add_file(source + "/" + f); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
};

// Reads one HF tensor as a graft array of the target's (per-layer) shape and dtype.
absl::StatusOr<Array> read_one(HfSource& src, const std::string& name, const Shape& want_shape,
                               DType want_dtype, bool transpose_it, const HfImportOptions& opt,
                               const std::string& path) {
  auto it = src.tensors.find(name);
  if (it == src.tensors.end()) {
    return absl::NotFoundError(
        str_cat("HF tensor \"", name, "\" (for leaf \"", path, "\") is missing"));
  }
  const auto [reader, info] = it->second;
  Shape file_shape = transpose_it ? swap_last_two(want_shape) : want_shape;
  if (info->shape != file_shape) {
    return absl::InvalidArgumentError(str_cat("HF tensor \"", name, "\" has shape ",
                                              shape_str(info->shape), ", leaf \"", path,
                                              "\" needs ", shape_str(file_shape)));
  }
  if (info->dtype != want_dtype && !opt.cast) {
    return absl::InvalidArgumentError(str_cat("HF tensor \"", name, "\" is ", info->dtype,
                                              ", leaf \"", path, "\" is ", want_dtype));
  }
  auto buf = Buffer::make(static_cast<size_t>(info->end - info->begin));
  if (absl::Status s = reader->read(*info, buf->data()); !s.ok()) return s;
  Array a = Array::from_buffer(std::move(buf), info->shape, info->dtype);
  if (transpose_it && a.ndim() >= 2) a = swap_last_two(a);
  if (a.dtype() != want_dtype) a = astype(a, want_dtype);
  return a;
}

}  // namespace

HfNameFn hf_rules(std::vector<std::pair<std::string, HfTensorMap>> rules) {
  std::vector<std::pair<std::regex, HfTensorMap>> compiled;
  for (auto& [pattern, map] : rules) compiled.push_back({std::regex(pattern), std::move(map)});
  return [compiled = std::move(compiled)](const std::string& path) -> std::optional<HfTensorMap> {
    std::smatch m;
    for (const auto& [re, map] : compiled) {
      if (!std::regex_match(path, m, re)) continue;
      HfTensorMap out = map;
      std::string name;
      for (size_t i = 0; i < out.hf_name.size(); ++i) {
        char c = out.hf_name[i];
        if (c == '$' && i + 1 < out.hf_name.size() && out.hf_name[i + 1] >= '1' &&
            out.hf_name[i + 1] <= '9') {
          size_t g = static_cast<size_t>(out.hf_name[++i] - '0');
          if (g < m.size()) name += m[g].str();
        } else {
          name += c;
        }
      }
      out.hf_name = name;
      return out;
    }
    return std::nullopt;
  };
}

absl::StatusOr<std::vector<Array>> import_hf_leaves(const std::string& source,
                                                    const std::vector<Array>& like,
                                                    const std::vector<std::string>& paths,
                                                    const HfNameFn& names,
                                                    const HfImportOptions& opt) {
  HfSource src;
  if (absl::Status s = src.open(source); !s.ok()) return s;
  std::set<std::string> used;
  std::vector<Array> out;
  try {
    for (size_t i = 0; i < like.size(); ++i) {
      const Array& l = like[i];
      std::optional<HfTensorMap> m = names(paths[i]);
      if (!m) {
        if (!opt.keep_unmapped) {
          return absl::NotFoundError(str_cat("no HF name for leaf \"", paths[i], "\""));
        }
        out.push_back(l);
        continue;
      }
      if (!m->stacked) {
        absl::StatusOr<Array> a =
            read_one(src, m->hf_name, l.shape(), l.dtype(), m->transpose, opt, paths[i]);
        if (!a.ok()) return a.status();
        used.insert(m->hf_name);
        out.push_back(*a);
        continue;
      }
      if (l.ndim() < 1 || m->hf_name.find("{i}") == std::string::npos) {
        return absl::InvalidArgumentError(
            str_cat("stacked leaf \"", paths[i], "\" needs rank >= 1 and \"{i}\" in its HF name"));
      }
      Shape per_layer(l.shape().begin() + 1, l.shape().end());
      std::vector<Array> layers;
      for (int64_t k = 0; k < l.dim(0); ++k) {
        std::string name = layer_name(m->hf_name, k);
        absl::StatusOr<Array> a =
            read_one(src, name, per_layer, l.dtype(), m->transpose, opt, paths[i]);
        if (!a.ok()) return a.status();
        used.insert(name);
        layers.push_back(*a);
      }
      out.push_back(stack(layers, 0));
    }
    eval(out);
  } catch (const graft::Error& e) {
    return absl::InvalidArgumentError(str_cat("HF import: ", e.what()));
  }
  if (!opt.allow_unused && used.size() != src.tensors.size()) {
    std::string unused;
    int shown = 0;
    for (const auto& [name, _] : src.tensors) {
      if (!used.count(name) && shown++ < 5) unused += (unused.empty() ? "" : ", ") + name;
    }
    return absl::InvalidArgumentError(str_cat(src.tensors.size() - used.size(),
                                              " HF tensors are not used by the mapping (", unused,
                                              "); set ", opt.allow_unused_name, " to ignore them"));
  }
  return out;
}

absl::StatusOr<HfTensorViews> hf_tensor_views(const std::vector<Array>& leaves,
                                              const std::vector<std::string>& paths,
                                              const HfNameFn& names) {
  std::vector<std::pair<std::string, Array>> out;
  try {
    for (size_t i = 0; i < leaves.size(); ++i) {
      std::optional<HfTensorMap> m = names(paths[i]);
      if (!m) continue;
      auto emit = [&](const std::string& name, Array a) {
        if (m->transpose && a.ndim() >= 2) a = swap_last_two(a);
        out.emplace_back(name, a);
      };
      if (!m->stacked) {
        emit(m->hf_name, leaves[i]);
        continue;
      }
      if (leaves[i].ndim() < 1 || m->hf_name.find("{i}") == std::string::npos) {
        return absl::InvalidArgumentError(
            str_cat("stacked leaf \"", paths[i], "\" needs rank >= 1 and \"{i}\" in its HF name"));
      }
      for (int64_t k = 0; k < leaves[i].dim(0); ++k) {
        emit(layer_name(m->hf_name, k), squeeze(slice_axis(leaves[i], 0, k, k + 1), {0}));
      }
    }
    std::vector<Array> arrays;
    for (const auto& [_, a] : out) arrays.push_back(a);
    eval(arrays);
    HfTensorViews result;
    for (const auto& [name, a] : out) {
      result.keep.push_back(a.host_buffer());
      result.views.push_back({name, a.dtype(), a.shape(), result.keep.back()->data()});
    }
    return result;
  } catch (const graft::Error& e) {
    return absl::InvalidArgumentError(str_cat("HF export: ", e.what()));
  }
}

absl::Status export_hf_leaves(const std::string& path, const std::vector<Array>& leaves,
                              const std::vector<std::string>& paths, const HfNameFn& names) {
  auto tensors = hf_tensor_views(leaves, paths, names);
  if (!tensors.ok()) return tensors.status();
  return write_safetensors(path, tensors->views, {{"format", "pt"}});
}

}  // namespace graft::checkpoint
