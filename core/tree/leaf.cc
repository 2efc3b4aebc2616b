#include "core/tree/leaf.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace graft {
namespace {

std::string demangled(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(t.name());
}

}  // namespace

std::string TreeLeaf::type_name() const { return demangled(value_.type()); }

namespace detail {

void wrong_leaf_type(const std::type_info& held, const std::type_info& asked) {
  fail("TreeLeaf", "holds ", demangled(held), ", asked for ", demangled(asked));
}

void structure_mismatch(const TreeDef& def, const std::type_info& type) {
  fail("tree_unflatten", "structure ", def.str(), " does not fit the type ", demangled(type));
}

}  // namespace detail
}  // namespace graft
