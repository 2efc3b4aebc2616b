#include "core/sharding/mesh.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"

namespace graft {

Mesh::Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names)
    : shape_(std::move(shape)), names_(std::move(axis_names)) {
  if (shape_.size() != names_.size()) {
    fail("Mesh", "has ", shape_.size(), " sizes for ", names_.size(), " axis names");
  }
  if (shape_.empty()) fail("Mesh", "needs at least one axis");
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i].empty()) fail("Mesh", "axis ", i, " has an empty name");
    if (shape_[i] < 1) fail("Mesh", "axis '", names_[i], "' has size ", shape_[i]);
    for (size_t j = 0; j < i; ++j) {
      if (names_[j] == names_[i]) fail("Mesh", "axis name '", names_[i], "' is given twice");
    }
  }
}

Mesh::Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names,
           const std::vector<Device>& devices)
    : Mesh(std::move(shape), std::move(axis_names)) {
  if (devices.empty()) fail("Mesh", "got no devices");
  platform_ = devices[0].platform;
  if (static_cast<int64_t>(devices.size()) < size()) {
    fail("Mesh", str(), " needs ", size(), " devices, got ", devices.size(), " ",
         platform_, " devices");
  }
  for (int64_t k = 0; k < size(); ++k) {
    if (devices[k].platform != platform_ || devices[k].id != k) {
      fail("Mesh", "the devices must be the first ones of one platform in order (",
           devices[0].str(), ", ", platform_, ":1, ...); device ", k, " is ", devices[k].str());
    }
  }
}

Mesh Mesh::single_device(const Device& d) {
  Mesh m;
  m.first_device_ = d.id;
  m.platform_ = d.platform;
  return m;
}

int64_t Mesh::size() const {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

int Mesh::axis_index_of(const char* op, const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  fail(op, "'", name, "' is not an axis of the mesh ", str());
}

int64_t Mesh::axis_size(const std::string& name) const {
  return shape_[axis_index_of("Mesh", name)];
}

std::vector<Device> Mesh::devices() const {
  const bool cpu = platform_ == "cpu";
  const std::vector<Device> all = cpu ? graft::devices() : graft::devices(platform_);
  if (first_device_ + size() > static_cast<int64_t>(all.size())) {
    fail("Mesh", str(), " needs ", first_device_ + size(), cpu ? "" : " " + platform_,
         " devices, there are ", all.size(), cpu ? " (set GRAFT_CPU_DEVICES)" : "");
  }
  return std::vector<Device>(all.begin() + first_device_, all.begin() + first_device_ + size());
}

std::string Mesh::str() const {
  if (names_.empty()) return absl::StrCat("Mesh(", platform_, ":", first_device_, ")");
  std::vector<std::string> parts;
  for (size_t i = 0; i < names_.size(); ++i)
    parts.push_back(absl::StrCat(names_[i], "=", shape_[i]));
  return absl::StrCat("Mesh(", absl::StrJoin(parts, ", "), platform_ == "cpu" ? "" : " on ",
                      platform_ == "cpu" ? "" : platform_, ")");
}

std::string PartitionSpec::str() const {
  std::vector<std::string> parts;
  for (const DimSplit& d : dims_) {
    if (d.axes.empty()) {
      parts.push_back("None");
    } else if (d.axes.size() == 1) {
      parts.push_back("'" + d.axes[0] + "'");
    } else {
      parts.push_back("('" + absl::StrJoin(d.axes, "', '") + "')");
    }
  }
  return absl::StrCat("P(", absl::StrJoin(parts, ", "), ")");
}

bool PartitionSpec::operator==(const PartitionSpec& o) const {
  const size_t n = std::max(dims_.size(), o.dims_.size());
  for (size_t d = 0; d < n; ++d) {
    const AxisNames none_split;
    const AxisNames& a = d < dims_.size() ? dims_[d].axes : none_split;
    const AxisNames& b = d < o.dims_.size() ? o.dims_[d].axes : none_split;
    if (a != b) return false;
  }
  return true;
}

int64_t MeshAxes::size() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

NamedSharding::NamedSharding(Mesh mesh, PartitionSpec spec)
    : mesh_(std::move(mesh)), spec_(std::move(spec)) {
  std::vector<std::string> seen;
  for (const DimSplit& d : spec_.dims()) {
    for (const std::string& a : d.axes) {
      mesh_.axis_index_of("NamedSharding", a);
      for (const std::string& s : seen) {
        if (s == a) fail("NamedSharding", spec_.str(), " names axis '", a, "' twice");
      }
      seen.push_back(a);
    }
  }
  text_ = is_single_device() ? "SingleDevice(" + mesh_.devices()[0].str() + ")"
                             : absl::StrCat("NamedSharding(", mesh_.str(), ", ", spec_.str(), ")");
}

bool NamedSharding::is_fully_replicated() const {
  for (const DimSplit& d : spec_.dims()) {
    for (const std::string& a : d.axes) {
      if (mesh_.axis_size(a) > 1) return false;
    }
  }
  return true;
}

void NamedSharding::check(const char* op, const Shape& shape) const {
  const auto& dims = spec_.dims();
  if (dims.size() > shape.size()) {
    fail(op, "the sharding ", str(), " has ", dims.size(), " entries for an array of rank ",
         shape.size(), " (", shape_str(shape), ")");
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t n = 1;
    for (const std::string& a : dims[d].axes) n *= mesh_.axis_size(a);
    if (shape[d] % n != 0) {
      fail(op, "the sharding ", str(), " does not split dimension ", d, " of size ", shape[d],
           " (array ", shape_str(shape), ") into ", n, " equal blocks");
    }
  }
}

Shape NamedSharding::shard_shape(const Shape& shape) const {
  check("shard_shape", shape);
  Shape s = shape;
  const auto& dims = spec_.dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    for (const std::string& a : dims[d].axes) s[d] /= mesh_.axis_size(a);
  }
  return s;
}

ShardIndex NamedSharding::shard_index(const Shape& shape, int64_t k) const {
  const Shape block = shard_shape(shape);
  // Coordinates of position k, row-major over the mesh.
  const auto& sizes = mesh_.shape();
  std::vector<int64_t> coord(sizes.size());
  for (size_t a = sizes.size(); a-- > 0;) {
    coord[a] = k % sizes[a];
    k /= sizes[a];
  }
  ShardIndex index;
  const auto& dims = spec_.dims();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t b = 0;  // the block's number along d: its axes' coordinates, major first
    if (d < dims.size()) {
      for (const std::string& a : dims[d].axes) {
        const int i = mesh_.axis_index_of("shard_index", a);
        b = b * sizes[i] + coord[i];
      }
    }
    index.emplace_back(b * block[d], (b + 1) * block[d]);
  }
  return index;
}

namespace detail {

DimAxes dim_axes(const char* op, const Mesh& mesh, const PartitionSpec& spec) {
  DimAxes d;
  for (const DimSplit& split : spec.dims()) {
    d.emplace_back();
    for (const std::string& a : split.axes) d.back().push_back(mesh.axis_index_of(op, a));
  }
  return d;
}

MeshAxes mesh_axes(const Mesh& mesh) { return MeshAxes{mesh.axis_names(), mesh.shape()}; }

PartitionSpec partition_spec(const MeshAxes& mesh, const DimAxes& dims) {
  std::vector<DimSplit> out;
  for (const std::vector<int>& axes : dims) {
    AxisNames names;
    for (int a : axes) names.push_back(mesh.names[a]);
    out.emplace_back(std::move(names));
  }
  return PartitionSpec(std::move(out));
}

std::string spec_str(const MeshAxes& mesh, const DimAxes& dims) {
  return partition_spec(mesh, dims).str();
}

int64_t split_count(const MeshAxes& mesh, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= mesh.sizes[a];
  return n;
}

}  // namespace detail

}  // namespace graft
