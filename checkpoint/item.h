// Item: one named thing in a checkpoint, either a pytree of arrays (params, optimizer state,
// an RNG key, small loader arrays) or a JSON value (loader position, config, anything the
// caller can serialize). A Composite names the items of one step, as Orbax's Composite does:
//
//   Composite items{{"params", Item::tree(params)}, {"opt", Item::tree(opt_state)},
//                   {"loader", Item::json({{"offset", 1234}})}};
//   mgr.save(step, items);
//   auto got = mgr.restore(step, {{"params", Item::tree(params)}});   // targets give structure
//   Params p = got->at("params").as<Params>();
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tree/tree.h"
#include "nlohmann/json.hpp"

namespace graft::checkpoint {

class Item {
 public:
  Item() = default;
  template <typename T>
  static Item tree(const T& t) {
    auto [leaves, def] = tree_flatten(t);
    return from_leaves(std::move(def), std::move(leaves));
  }
  static Item from_leaves(TreeDef def, std::vector<Array> leaves) {
    Item i;
    i.def_ = std::move(def);
    i.leaves_ = std::move(leaves);
    return i;
  }
  static Item json(nlohmann::json v) {
    Item i;
    i.is_json_ = true;
    i.json_ = std::move(v);
    return i;
  }

  bool is_json() const { return is_json_; }
  const nlohmann::json& json_value() const { return json_; }
  const TreeDef& def() const { return def_; }
  const std::vector<Array>& leaves() const { return leaves_; }
  // Rebuilds a T; throws graft::Error if T's structure differs (or this is a JSON item).
  template <typename T>
  T as() const {
    if (is_json_) fail("checkpoint", "item holds JSON, not a pytree");
    return tree_unflatten<T>(def_, leaves_);
  }

 private:
  bool is_json_ = false;
  nlohmann::json json_;
  TreeDef def_;
  std::vector<Array> leaves_;
};

using Composite = std::map<std::string, Item>;

}  // namespace graft::checkpoint
