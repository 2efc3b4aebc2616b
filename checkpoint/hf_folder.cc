#include "checkpoint/hf_folder.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>
#include <system_error>

#include "checkpoint/file_util.h"
#include "core/error.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The folder an export writes, split into its parent and its own name.
struct Target {
  fs::path path;
  fs::path parent;
  std::string name;
  fs::path staging() const { return parent / ("." + name + ".partial"); }
  fs::path old() const { return parent / ("." + name + ".old"); }
};

absl::StatusOr<Target> target_of(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("HF export: the folder path is empty");
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "out/hf/" -> "out/hf"
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError("HF export: \"" + dir +
                                      "\" names no folder of its own (an export replaces the "
                                      "whole folder): name a subfolder, e.g. \"" +
                                      (fs::path(dir) / "hf").string() + "\"");
  }
  fs::path parent = p.parent_path();
  if (parent.empty()) parent = ".";
  return Target{p, parent, name};
}

std::string shard_name(size_t k, size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", k + 1, n);
  return buf;
}

uint64_t tensor_bytes(const TensorView& t) {
  uint64_t n = static_cast<uint64_t>(safetensors_dtype_size(t.dtype));
  for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
  return n;
}

// Tensor indices per shard, in order: the next tensor starts a new shard when it would take
// the current one past the limit.
std::vector<std::vector<size_t>> plan_shards(const std::vector<TensorView>& tensors,
                                             uint64_t max_bytes) {
  std::vector<std::vector<size_t>> shards;
  uint64_t in_last = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const uint64_t b = tensor_bytes(tensors[i]);
    if (shards.empty() || (!shards.back().empty() && in_last + b > max_bytes)) {
      shards.emplace_back();
      in_last = 0;
    }
    shards.back().push_back(i);
    in_last += b;
  }
  if (shards.empty()) shards.emplace_back();  // no tensors: one empty model.safetensors
  return shards;
}

absl::Status fs_error(const std::string& what, const fs::path& path, const std::error_code& ec) {
  return absl::FailedPreconditionError("HF export: cannot " + what + " " + path.string() + ": " +
                                       ec.message());
}

// Writes every file of the folder into `dir` (which exists and is empty).
absl::Status write_files(const fs::path& dir, const HfFolderFiles& files,
                         const std::vector<TensorView>& tensors, const HfFolderOptions& options) {
  if (auto s = write_file((dir / "config.json").string(), files.config.dump(2) + "\n", true);
      !s.ok()) {
    return s;
  }
  if (!files.generation_config.is_null()) {
    const std::string text = files.generation_config.dump(2) + "\n";
    if (auto s = write_file((dir / "generation_config.json").string(), text, true); !s.ok()) {
      return s;
    }
  }
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  const auto shards = plan_shards(tensors, options.max_shard_bytes);
  if (shards.size() == 1) {
    return write_safetensors((dir / "model.safetensors").string(), tensors, metadata);
  }
  json weight_map = json::object();
  uint64_t total = 0;
  for (size_t k = 0; k < shards.size(); ++k) {
    const std::string file = shard_name(k, shards.size());
    std::vector<TensorView> part;
    for (size_t i : shards[k]) {
      part.push_back(tensors[i]);
      weight_map[tensors[i].name] = file;
      total += tensor_bytes(tensors[i]);
    }
    if (auto s = write_safetensors((dir / file).string(), part, metadata); !s.ok()) return s;
  }
  const json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  return write_file((dir / "model.safetensors.index.json").string(), index.dump(2) + "\n", true);
}

}  // namespace

bool is_hf_export_file(const std::string& name) {
  static const std::regex shard(R"(model-\d{5}-of-\d{5}\.safetensors)");
  return name == "config.json" || name == "generation_config.json" || name == "model.safetensors" ||
         name == "model.safetensors.index.json" || std::regex_match(name, shard);
}

absl::Status check_hf_export_dir(const std::string& dir) {
  absl::StatusOr<Target> t = target_of(dir);
  if (!t.ok()) return t.status();
  std::error_code ec;
  const fs::file_status st = fs::status(t->path, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) {
      return absl::FailedPreconditionError(
          "HF export: " + t->path.string() +
          " exists and is not a folder (an export is a folder: config.json, "
          "model.safetensors, ...); remove it or name another path");
    }
    for (fs::directory_iterator it(t->path, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string entry = it->path().filename().string();
      if (!is_hf_export_file(entry)) {
        return absl::FailedPreconditionError(
            "HF export: " + t->path.string() + " holds \"" + entry +
            "\", which an export does not write (an export replaces the whole folder and "
            "would lose it); name a new or empty folder");
      }
    }
    if (ec) return fs_error("list", t->path, ec);
  } else if (ec && ec != std::errc::no_such_file_or_directory) {
    return fs_error("inspect", t->path, ec);
  }
  fs::create_directories(t->parent, ec);
  if (ec) return fs_error("create", t->parent, ec);
  // The export is staged in the parent and renamed into place: prove that both work there.
  const fs::path probe = t->staging();
  fs::remove_all(probe, ec);  // a leftover of an export that was interrupted
  fs::create_directory(probe, ec);
  if (ec) return fs_error("create a folder in", t->parent, ec);
  absl::Status s = write_file((probe / "probe").string(), "", false);
  fs::remove_all(probe, ec);
  if (!s.ok()) {
    return absl::FailedPreconditionError("HF export: cannot write in " + t->parent.string() + ": " +
                                         std::string(s.message()));
  }
  if (ec) return fs_error("remove", probe, ec);
  return absl::OkStatus();
}

absl::Status write_hf_folder(const std::string& dir, const HfFolderFiles& files,
                             const std::vector<TensorView>& tensors,
                             const HfFolderOptions& options) {
  if (!files.config.is_object()) {
    return absl::InvalidArgumentError("HF export: config.json must be a JSON object");
  }
  if (!files.generation_config.is_null() && !files.generation_config.is_object()) {
    return absl::InvalidArgumentError(
        "HF export: generation_config.json must be a JSON object (or null: not written)");
  }
  if (options.max_shard_bytes == 0) {
    return absl::InvalidArgumentError("HF export: max_shard_bytes must be > 0");
  }
  if (auto s = check_hf_export_dir(dir); !s.ok()) return s;
  const Target t = *target_of(dir);
  const fs::path staging = t.staging();
  std::error_code ec;
  fs::create_directory(staging, ec);
  if (ec) return fs_error("create", staging, ec);
  auto fail = [&](absl::Status s) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return s;
  };
  if (auto s = write_files(staging, files, tensors, options); !s.ok()) return fail(s);
  if (auto s = fsync_dir(staging.string()); !s.ok()) return fail(s);
  const bool replace = fs::exists(t.path, ec);
  if (replace) {
    fs::remove_all(t.old(), ec);
    fs::rename(t.path, t.old(), ec);
    if (ec) return fail(fs_error("move the earlier export aside:", t.path, ec));
  }
  fs::rename(staging, t.path, ec);
  if (ec) {
    std::error_code ignored;
    if (replace) fs::rename(t.old(), t.path, ignored);  // put the earlier export back
    return fail(fs_error("rename the written folder to", t.path, ec));
  }
  if (auto s = fsync_dir(t.parent.string()); !s.ok()) return s;
  if (replace) {
    fs::remove_all(t.old(), ec);
    if (ec) {
      return absl::InternalError("HF export: written to " + t.path.string() +
                                 ", but the earlier export moved to " + t.old().string() +
                                 " could not be removed: " + ec.message());
    }
  }
  return absl::OkStatus();
}

absl::Status export_hf_folder_leaves(const std::string& dir, const std::vector<Array>& leaves,
                                     const std::vector<std::string>& paths, const HfNameFn& names,
                                     const HfFolderFiles& files, const HfFolderOptions& options) {
  auto tensors = hf_tensor_views(leaves, paths, names);
  if (!tensors.ok()) return tensors.status();
  return write_hf_folder(dir, files, tensors->views, options);
}

absl::StatusOr<std::optional<json>> read_hf_config(const std::string& source) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return std::optional<json>();
  const std::string path = (fs::path(source) / "config.json").string();
  if (!fs::exists(path, ec)) return std::optional<json>();
  std::string text;
  if (absl::Status s = read_file(path, text, 16u << 20); !s.ok()) return s;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::DataLossError(path + " is not a JSON object");
  return std::optional<json>(std::move(j));
}

}  // namespace graft::checkpoint
