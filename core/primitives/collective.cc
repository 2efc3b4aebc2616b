#include "core/primitives/collective.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"
#include "core/interpreters/batching.h"

namespace graft {

namespace {

template <typename P>
const P& as(const Primitive& o) {
  return static_cast<const P&>(o);
}

void check_unary(const Primitive& p, const std::vector<Aval>& in) {
  if (in.size() != 1) fail(p.name(), "takes 1 operand, got ", in.size());
}

// dim normalized against `rank` (negative counts from the end).
int check_dim(const Primitive& p, const char* what, int dim, int64_t rank) {
  if (dim < 0 || dim >= rank) {
    fail(p.name(), what, " ", dim, " is out of range for rank ", rank);
  }
  return dim;
}

std::string tiled_str(bool tiled) { return tiled ? " tiled=True" : ""; }

}  // namespace

Collective::Collective(PrimitiveId id, std::vector<std::string> axes, std::vector<int64_t> sizes)
    : Primitive(id), axes_(std::move(axes)), sizes_(std::move(sizes)) {
  if (axes_.empty()) fail(name(), "needs at least one axis name");
  if (axes_.size() != sizes_.size()) fail(name(), "internal: one size per axis name");
  mask_ = 0;
  for (const std::string& a : axes_) {
    AxisMask bit = AxisMask{1} << axis_bit(a);
    if (mask_ & bit) fail(name(), "axis name '", a, "' is given twice");
    mask_ |= bit;
  }
  for (int64_t s : sizes_) {
    if (s < 1) fail(name(), "axis size must be positive, got ", s);
  }
}

int64_t Collective::group_size() const {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  return n;
}

std::string Collective::params() const {
  return absl::StrCat("axes=(", absl::StrJoin(axes_, ", "), ") sizes=(",
                      absl::StrJoin(sizes_, ", "), ")");
}

bool Collective::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  const auto& c = as<Collective>(o);
  return c.axes_ == axes_ && c.sizes_ == sizes_;
}

void Collective::infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const {
  AxisMask m = mask_;
  for (const Aval& a : in) m |= a.vma;
  for (Aval& a : out) a.vma = m;
}

int Collective::batch_axis_position() const {
  const std::string& b = detail::batch_axis_name();
  if (b.empty()) return -1;
  for (size_t k = 0; k < axes_.size(); ++k) {
    if (axes_[k] == b) return static_cast<int>(k);
  }
  return -1;
}

std::vector<std::string> Collective::axes_without(int k) const {
  std::vector<std::string> a = axes_;
  a.erase(a.begin() + k);
  return a;
}

std::vector<int64_t> Collective::sizes_without(int k) const {
  std::vector<int64_t> s = sizes_;
  s.erase(s.begin() + k);
  return s;
}

std::string DimCollective::params() const {
  return absl::StrCat(Collective::params(),
                      id() == PrimitiveId::kAllGather ? " axis=" : " scatter_dimension=", dim_,
                      tiled_str(tiled_));
}

bool DimCollective::same_params(const Primitive& o) const {
  return Collective::same_params(o) && as<DimCollective>(o).dim_ == dim_ &&
         as<DimCollective>(o).tiled_ == tiled_;
}

// ---- psum / pmax / pmin ----

std::vector<Aval> AllReduce::infer(const std::vector<Aval>& in) const {
  check_unary(*this, in);
  const DType d = in[0].dtype;
  if (id() == PrimitiveId::kPsum && d == DType::kBool) {
    fail(name(), "needs a numeric operand, got ", in[0].str());
  }
  return {Aval{in[0].shape, d, in[0].weak}};
}

void AllReduce::infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const {
  for (Aval& a : out) a.vma = in[0].vma & ~mask();
}

// ---- all_gather ----

std::vector<Aval> AllGather::infer(const std::vector<Aval>& in) const {
  check_unary(*this, in);
  Shape s = in[0].shape;
  const int64_t n = sizes()[0];
  if (tiled()) {
    check_dim(*this, "axis", dim(), static_cast<int64_t>(s.size()));
    s[dim()] *= n;
  } else {
    check_dim(*this, "axis", dim(), static_cast<int64_t>(s.size()) + 1);
    s.insert(s.begin() + dim(), n);
  }
  return {Aval{s, in[0].dtype, in[0].weak}};
}

// ---- psum_scatter ----

std::vector<Aval> PsumScatter::infer(const std::vector<Aval>& in) const {
  check_unary(*this, in);
  if (in[0].dtype == DType::kBool) fail(name(), "needs a numeric operand, got ", in[0].str());
  Shape s = in[0].shape;
  const int64_t n = sizes()[0];
  check_dim(*this, "scatter_dimension", dim(), static_cast<int64_t>(s.size()));
  if (tiled()) {
    if (s[dim()] % n != 0) {
      fail(name(), "scatter_dimension ", dim(), " of ", in[0].str(),
           " is not divisible by the axis size ", n);
    }
    s[dim()] /= n;
  } else {
    if (s[dim()] != n) {
      fail(name(), "scatter_dimension ", dim(), " of ", in[0].str(), " must equal the axis size ",
           n, " (or pass tiled)");
    }
    s.erase(s.begin() + dim());
  }
  return {Aval{s, in[0].dtype, in[0].weak}};
}

// ---- all_to_all ----

std::vector<Aval> AllToAll::infer(const std::vector<Aval>& in) const {
  check_unary(*this, in);
  Shape s = in[0].shape;
  const int64_t n = sizes()[0];
  const auto rank = static_cast<int64_t>(s.size());
  check_dim(*this, "split_axis", split_, rank);
  if (tiled_) {
    check_dim(*this, "concat_axis", concat_, rank);
    if (s[split_] % n != 0) {
      fail(name(), "split_axis ", split_, " of ", in[0].str(),
           " is not divisible by the axis size ", n);
    }
    s[split_] /= n;
    s[concat_] *= n;
  } else {
    check_dim(*this, "concat_axis", concat_, rank);
    if (s[split_] != n) {
      fail(name(), "split_axis ", split_, " of ", in[0].str(), " must equal the axis size ", n,
           " (or pass tiled)");
    }
    s.erase(s.begin() + split_);
    s.insert(s.begin() + concat_, n);
  }
  return {Aval{s, in[0].dtype, in[0].weak}};
}

std::string AllToAll::params() const {
  return absl::StrCat(Collective::params(), " split_axis=", split_, " concat_axis=", concat_,
                      tiled_str(tiled_));
}

bool AllToAll::same_params(const Primitive& o) const {
  const auto& a = as<AllToAll>(o);
  return Collective::same_params(o) && a.split_ == split_ && a.concat_ == concat_ &&
         a.tiled_ == tiled_;
}

// ---- ppermute ----

Ppermute::Ppermute(std::string axis, int64_t size, std::vector<std::pair<int, int>> perm)
    : Collective(PrimitiveId::kPpermute, {std::move(axis)}, {size}), perm_(std::move(perm)) {
  std::vector<bool> src(static_cast<size_t>(size)), dst(static_cast<size_t>(size));
  for (auto [s, d] : perm_) {
    if (s < 0 || s >= size || d < 0 || d >= size) {
      fail(name(), "perm pair (", s, ", ", d, ") is out of range for axis size ", size);
    }
    if (src[s] || dst[d]) {
      fail(name(), "perm must name each source and each destination at most once; (", s, ", ", d,
           ") repeats one");
    }
    src[s] = dst[d] = true;
  }
}

std::vector<Aval> Ppermute::infer(const std::vector<Aval>& in) const {
  check_unary(*this, in);
  return {Aval{in[0].shape, in[0].dtype, in[0].weak}};
}

std::string Ppermute::params() const {
  std::vector<std::string> pairs;
  for (auto [s, d] : perm_) pairs.push_back(absl::StrCat("(", s, ", ", d, ")"));
  return absl::StrCat(Collective::params(), " perm=(", absl::StrJoin(pairs, ", "), ")");
}

bool Ppermute::same_params(const Primitive& o) const {
  return Collective::same_params(o) && as<Ppermute>(o).perm_ == perm_;
}

int Ppermute::source_of(int dst) const {
  for (auto [s, d] : perm_) {
    if (d == dst) return s;
  }
  return -1;
}

// ---- axis_index ----

std::vector<Aval> AxisIndex::infer(const std::vector<Aval>& in) const {
  if (!in.empty()) fail(name(), "takes no operands, got ", in.size());
  return {Aval{{}, DType::kI32, false}};
}

}  // namespace graft
