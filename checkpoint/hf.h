// Hugging Face style safetensors import / export through a name mapping.
//
// A mapping turns a graft leaf path (tree_leaf_paths: "layers.0.attn.wq") into the HF tensor
// it corresponds to ("model.layers.0.self_attn.q_proj.weight"), with per-tensor transforms:
//  - transpose: swap the last two dims (graft Linear weights are [in, out]; torch's are
//    [out, in]);
//  - stacked: the graft leaf stacks the layers on axis 0 (a scan over layers); it maps to one
//    HF tensor per layer, named by replacing "{i}" in hf_name with the layer index.
// hf_rules() builds a mapping from regex rules; any callable works.
//
//   auto names = hf_rules({{R"(embed\.table)", {"model.embed_tokens.weight"}},
//                          {R"(layers\.(\d+)\.attn\.wq)",
//                           {"model.layers.$1.self_attn.q_proj.weight", /*transpose=*/true}}});
//   absl::StatusOr<Llama> p = import_hf("/models/llama", params_like, names);
//   absl::Status s = export_hf("/tmp/out.safetensors", params, names);
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/safetensors.h"
#include "core/tree/tree.h"

namespace graft::checkpoint {

struct HfTensorMap {
  std::string hf_name;
  bool transpose = false;
  bool stacked = false;
};
// nullopt: the leaf has no HF counterpart (export skips it; import fails unless
// keep_unmapped).
using HfNameFn = std::function<std::optional<HfTensorMap>(const std::string& graft_path)>;

// The first rule whose regex fully matches the path wins; "$1".."$9" in hf_name are replaced
// by the regex's groups.
HfNameFn hf_rules(std::vector<std::pair<std::string, HfTensorMap>> rules);

struct HfImportOptions {
  bool cast = true;            // convert HF dtypes (often bf16) to the target's
  bool keep_unmapped = false;  // leaves without an HF name keep the target's value
  bool allow_unused = false;   // HF tensors that no leaf asked for are not an error
  // What the "not used by the mapping" error names as the way to ignore them: a program that
  // exposes allow_unused under its own name (a config key) says so here.
  std::string allow_unused_name = "HfImportOptions::allow_unused";
};

// `source` is a .safetensors file, or a directory holding model.safetensors or a sharded
// model.safetensors.index.json (its weight_map names each tensor's file).
absl::StatusOr<std::vector<Array>> import_hf_leaves(const std::string& source,
                                                    const std::vector<Array>& like,
                                                    const std::vector<std::string>& paths,
                                                    const HfNameFn& names,
                                                    const HfImportOptions& options = {});
// The HF tensors `leaves` map to, in leaf order: leaves without an HF name skipped, stacked
// leaves split into one tensor per layer, transposes applied; evaluated, as views over host
// buffers that `keep` holds alive (what write_safetensors takes).
struct HfTensorViews {
  std::vector<TensorView> views;
  std::vector<std::shared_ptr<const Buffer>> keep;
};
absl::StatusOr<HfTensorViews> hf_tensor_views(const std::vector<Array>& leaves,
                                              const std::vector<std::string>& paths,
                                              const HfNameFn& names);
// Writes one safetensors file with metadata {"format": "pt"} (hf_folder.h writes a whole
// folder that transformers' from_pretrained loads).
absl::Status export_hf_leaves(const std::string& path, const std::vector<Array>& leaves,
                              const std::vector<std::string>& paths, const HfNameFn& names);

template <typename T>
absl::StatusOr<T> import_hf(const std::string& source, const T& like, const HfNameFn& names,
                            const HfImportOptions& options = {}) {
  auto [leaves, def] = tree_flatten(like);
  absl::StatusOr<std::vector<Array>> got =
      import_hf_leaves(source, leaves, tree_leaf_paths(def), names, options);
  if (!got.ok()) return got.status();
  return tree_unflatten<T>(def, *got);
}

template <typename T>
absl::Status export_hf(const std::string& path, const T& tree, const HfNameFn& names) {
  auto [leaves, def] = tree_flatten(tree);
  return export_hf_leaves(path, leaves, tree_leaf_paths(def), names);
}

}  // namespace graft::checkpoint
