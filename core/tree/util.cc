#include "core/tree/util.h"

#include <complex>

#include "core/error.h"

namespace graft {
namespace {

// Sequence-like kinds have no keys; a map's keys are dict keys; a struct's are attributes.
KeyEntry key_of(const TreeDef& def, size_t i) {
  if (def.keys.empty()) return KeyEntry{KeyEntry::Kind::kSequence, static_cast<int64_t>(i), ""};
  if (def.kind == "map") return KeyEntry{KeyEntry::Kind::kDict, 0, def.keys[i]};
  return KeyEntry{KeyEntry::Kind::kAttr, 0, def.keys[i]};
}

void collect(const TreeDef& def, KeyPath& prefix, std::vector<KeyPath>& out) {
  if (def.kind == "*") {
    out.push_back(prefix);
    return;
  }
  for (size_t i = 0; i < def.children.size(); ++i) {
    const bool keyed = def.kind != "some";  // an optional adds no level, as in tree_leaf_paths
    if (keyed) prefix.push_back(key_of(def, i));
    collect(def.children[i], prefix, out);
    if (keyed) prefix.pop_back();
  }
}

}  // namespace

std::string KeyEntry::str() const {
  switch (kind) {
    case Kind::kSequence:
      return "[" + std::to_string(index) + "]";
    case Kind::kDict:
      return "['" + name + "']";
    case Kind::kAttr:
      return "." + name;
  }
  return "";
}

std::string keystr(const KeyPath& path) {
  std::string s;
  for (const KeyEntry& k : path) s += k.str();
  return s;
}

std::vector<KeyPath> tree_key_paths(const TreeDef& def) {
  std::vector<KeyPath> out;
  KeyPath prefix;
  collect(def, prefix, out);
  return out;
}

TreeDef tree_compose(const TreeDef& outer, const TreeDef& inner) {
  if (outer.kind == "*") return inner;
  std::vector<TreeDef> ch;
  for (const TreeDef& c : outer.children) ch.push_back(tree_compose(c, inner));
  return detail::make_def(outer.kind, outer.keys, std::move(ch));
}

bool tree_all_flat(const std::vector<Array>& leaves) {
  for (const Array& x : leaves) {
    if (!x.valid()) fail("tree_all", "a leaf is an empty Array handle");
    if (x.size() != 1) {
      fail("tree_all", "the truth value of an array of shape ", shape_str(x.shape()),
           " is ambiguous");
    }
    // As astype(x, bool): nonzero, NaN included; a complex leaf by both parts.
    const bool truth = is_complex(x.dtype()) ? x.item<std::complex<double>>() != 0.0
                                             : x.item<bool>();
    if (!truth) return false;
  }
  return true;
}

std::vector<Array> tree_transpose_leaves(const TreeDef& outer, const TreeDef& inner,
                                         const std::vector<Array>& leaves) {
  const int64_t no = outer.num_leaves, ni = inner.num_leaves;
  if (static_cast<int64_t>(leaves.size()) != no * ni) {
    fail("tree_transpose", "expected ", no, " x ", ni, " leaves, got ", leaves.size());
  }
  std::vector<Array> out(leaves.size());
  for (int64_t o = 0; o < no; ++o) {
    for (int64_t i = 0; i < ni; ++i) out[i * no + o] = leaves[o * ni + i];
  }
  return out;
}

}  // namespace graft
