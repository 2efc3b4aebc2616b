#include "examples/llama/placement.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/device/device.h"

namespace graft::llama_train {

std::vector<int> tp_dims(const std::vector<std::string>& paths, const std::vector<Array>& leaves) {
  std::vector<int> dims(leaves.size(), -1);
  for (size_t i = 0; i < leaves.size() && i < paths.size(); ++i) {
    // The field name: the last path component that is not an index.
    std::string name = paths[i];
    if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
    const int rank = static_cast<int>(leaves[i].ndim());
    if (rank < 2) continue;
    if (name == "wq" || name == "wk" || name == "wv" || name == "w1" || name == "w3" ||
        name == "output") {
      dims[i] = rank - 1;  // column-parallel: output features (the vocabulary for the head)
    } else if (name == "wo" || name == "w2") {
      dims[i] = rank - 2;  // row-parallel: input features
    }
  }
  return dims;
}

absl::StatusOr<std::optional<Mesh>> mesh_for(const train::ParallelismConfig& par,
                                             int64_t micro_batch, std::ostream& out,
                                             const std::string& platform) {
  const int64_t dp = par.data_parallel_replicate_degree, fsdp = par.data_parallel_shard_degree;
  const int64_t tp = par.tensor_parallel_degree;
  const int64_t devices = dp * fsdp * tp;
  const bool cpu = platform == "cpu";
  const int64_t available =
      cpu ? device_count() : static_cast<int64_t>(graft::devices(platform).size());
  if (devices > available) {
    // The degrees in play, in the mesh's order (the replicate degree always when it is the
    // only one, or next to the shard degree).
    std::vector<std::string> keys;
    std::vector<int64_t> values;
    if (dp > 1 || fsdp > 1 || tp == 1)
      keys.push_back("data_parallel_replicate_degree"), values.push_back(dp);
    if (fsdp > 1) keys.push_back("data_parallel_shard_degree"), values.push_back(fsdp);
    if (tp > 1) keys.push_back("tensor_parallel_degree"), values.push_back(tp);
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.", absl::StrJoin(keys, " x "), " = ", absl::StrJoin(values, " x "), " needs ",
        devices, cpu ? " devices" : " GPUs", ", there are ", available,
        cpu ? absl::StrCat(" (set GRAFT_CPU_DEVICES=", devices, ")")
            : std::string(" (training.device = \"" + platform + "\" uses the first GPUs)")));
  }
  const int64_t rows = micro_batch / (dp * fsdp);
  if (tp > 1) {
    Mesh mesh = parallel_mesh(dp, fsdp, tp, platform);
    out << "tensor parallel over " << tp << " devices x data parallel over " << dp * fsdp << " ("
        << fsdp << " sharded x " << dp << " replicated), " << mesh.str()
        << ", jit shardings: " << rows << " rows per data-parallel rank per micro-batch\n";
    return std::optional<Mesh>(mesh);
  }
  if (fsdp > 1) {
    out << "FSDP over " << dp * fsdp << " devices (" << fsdp << " sharded x " << dp
        << " replicated, jit shardings): " << rows << " rows per device per micro-batch\n";
    return std::optional<Mesh>(parallel_mesh(dp, fsdp, 1, platform));
  }
  if (dp > 1 && !cpu) {
    out << "data parallel over " << dp << " GPUs (jit shardings): " << rows
        << " rows per device per micro-batch\n";
    return std::optional<Mesh>(parallel_mesh(dp, 1, 1, platform));
  }
  if (dp > 1) {
    out << "data parallel over " << dp << " devices: " << rows
        << " rows per device per micro-batch\n";
  }
  return std::optional<Mesh>();
}

}  // namespace graft::llama_train
