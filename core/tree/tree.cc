#include "core/tree/tree.h"

#include "absl/strings/str_join.h"

namespace graft {

std::string TreeDef::str() const {
  if (kind == "*") return "*";
  std::vector<std::string> parts;
  for (size_t i = 0; i < children.size(); ++i) {
    parts.push_back(keys.empty() ? children[i].str() : keys[i] + "=" + children[i].str());
  }
  std::string inner = absl::StrJoin(parts, ", ");
  if (kind == "vector" || kind == "array") return "[" + inner + "]";
  if (kind == "tuple" || kind == "pair") return "(" + inner + ")";
  if (kind == "map") return "{" + inner + "}";
  if (kind == "none") return "None";
  if (kind == "some") return "Some(" + inner + ")";
  return kind + "(" + inner + ")";
}

void check_same_structure(const char* op, const TreeDef& a, const TreeDef& b) {
  if (a != b) fail(op, "pytree structures differ: ", a.str(), " vs ", b.str());
}

namespace {
void collect_paths(const TreeDef& def, const std::string& prefix, std::vector<std::string>& out) {
  if (def.kind == "*") {
    out.push_back(prefix);
    return;
  }
  for (size_t i = 0; i < def.children.size(); ++i) {
    std::string key = def.keys.empty() ? std::to_string(i) : def.keys[i];
    if (def.kind == "some") key = "";  // optional adds no level to the path
    std::string path = prefix.empty() ? key : (key.empty() ? prefix : prefix + "." + key);
    collect_paths(def.children[i], path, out);
  }
}
}  // namespace

std::vector<std::string> tree_leaf_paths(const TreeDef& def) {
  std::vector<std::string> out;
  collect_paths(def, "", out);
  return out;
}

namespace detail {

std::vector<std::string> split_field_names(const char* names) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = names;; ++p) {
    if (*p == ',' || *p == '\0') {
      out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else if (*p != ' ') {
      cur += *p;
    }
  }
  return out;
}

TreeDef make_def(std::string kind, std::vector<std::string> keys, std::vector<TreeDef> children) {
  TreeDef d{std::move(kind), std::move(keys), std::move(children), 0};
  for (const TreeDef& c : d.children) d.num_leaves += c.num_leaves;
  return d;
}

}  // namespace detail
}  // namespace graft
