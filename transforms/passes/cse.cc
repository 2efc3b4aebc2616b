#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "transforms/passes/passes.h"

namespace graft {

namespace {

// Constants up to this many bytes are compared by value (literals such as 2.0 are created
// afresh at each use); larger ones only by identity.
constexpr int64_t kCompareBytes = 256;

bool same_constant(const Array& a, const Array& b) {
  if (a.same(b)) return true;
  if (!(a.aval() == b.aval()) || a.nbytes() > kCompareBytes) return false;
  return std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

size_t instr_hash(const Instr& instr) {
  size_t h = std::hash<int>()(static_cast<int>(instr.prim->id()));
  for (int v : instr.in) h = h * 1000003u + std::hash<int>()(v);
  return h;
}

// Two instructions with bodies applied to the same inputs whose primitives merge (grad's
// forward scan and the one its vjp rule saves carries with): the earlier becomes the merged
// one, with new values for the outputs it adds, and instr's outputs are renamed to its.
bool merge_into(Program& out, const std::unordered_multimap<size_t, size_t>& seen, size_t h,
                const Instr& instr, std::vector<int>& rename) {
  auto [lo, hi] = seen.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    Instr& cand = out.instrs[it->second];
    if (cand.prim->id() != instr.prim->id() || cand.in != instr.in) continue;
    std::optional<Merged> m = cand.prim->merge_with(*instr.prim, eliminate_common_subexpressions);
    if (!m) continue;
    std::vector<Aval> in_avals;
    for (int v : cand.in) in_avals.push_back(out.avals[v]);
    std::vector<Aval> outs = m->prim->infer(in_avals);
    while (cand.out.size() < outs.size()) {
      cand.out.push_back(out.add_value(outs[cand.out.size()]));
    }
    cand.prim = m->prim;
    for (size_t k = 0; k < instr.out.size(); ++k) {
      rename[instr.out[k]] = cand.out[m->other_outputs[k]];
    }
    return true;
  }
  return false;
}

}  // namespace

Program eliminate_common_subexpressions(const Program& p) {
  std::vector<int> rename(p.avals.size());
  for (size_t v = 0; v < rename.size(); ++v) rename[v] = static_cast<int>(v);
  Program out;
  out.avals = p.avals;
  out.inputs = p.inputs;
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Array& c = p.constant_values[i];
    int found = -1;
    for (size_t j = 0; j < out.constants.size() && found < 0; ++j) {
      if (same_constant(c, out.constant_values[j])) found = out.constants[j];
    }
    if (found >= 0) {
      rename[p.constants[i]] = found;
    } else {
      out.constants.push_back(p.constants[i]);
      out.constant_values.push_back(c);
    }
  }
  std::unordered_multimap<size_t, size_t> seen;  // hash -> index in out.instrs
  for (const Instr& orig : p.instrs) {
    Instr instr = orig;
    for (int& v : instr.in) v = rename[v];
    if (has_effects(*instr.prim)) {  // each print (in a body too) must happen
      out.instrs.push_back(std::move(instr));
      continue;
    }
    size_t h = instr_hash(instr);
    const Instr* match = nullptr;
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi && match == nullptr; ++it) {
      const Instr& cand = out.instrs[it->second];
      if (cand.prim->id() == instr.prim->id() && cand.in == instr.in &&
          cand.out.size() == instr.out.size() && cand.prim->same_params(*instr.prim)) {
        match = &cand;
      }
    }
    if (match != nullptr) {
      for (size_t k = 0; k < instr.out.size(); ++k) rename[instr.out[k]] = match->out[k];
      continue;
    }
    if (!instr.prim->sub_programs().empty() && merge_into(out, seen, h, instr, rename)) continue;
    seen.emplace(h, out.instrs.size());
    out.instrs.push_back(std::move(instr));
  }
  for (int v : p.outputs) out.outputs.push_back(rename[v]);
  return out;
}

}  // namespace graft
