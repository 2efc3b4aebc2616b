// jnp.einsum from dot_general, transpose, where and sum (see core/numpy/lax_numpy.h).
//
// Labels are ints: letters 0..51, the broadcast '...' dims 52 + position (right-aligned, so
// each operand's ellipsis dims take the last labels). Steps, as JAX's _einsum:
//   1. per operand: a repeated label keeps its diagonal (where(i == j, x, 0), summed over the
//      repeats, as lax._delta + select + reduce), labels no other operand nor the output has
//      are summed out;
//   2. greedily contract pairs with one dot_general (shared labels still needed are batch
//      dims, the others contracted);
//   3. sum what the output does not name, transpose to its order, convert to the result dtype.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/numpy/lax_numpy.h"
#include "core/lax/util.h"

namespace graft {
namespace {

constexpr int kEllipsisBase = 52;
using Labels = std::vector<int>;

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;  // numpy sorts 'A' < 'a'
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

struct Parsed {
  std::vector<Labels> inputs;
  Labels output;
};

// One term ("ab...c"): letter labels and where '...' was (-1: none).
struct Term {
  Labels letters;
  int ellipsis_at = -1;
};

Term parse_term(const std::string& s, const std::string& subscripts) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || t.ellipsis_at >= 0) {
        fail("einsum", "invalid ellipsis in subscripts '", subscripts, "'");
      }
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    int l = letter_label(c);
    if (l < 0) fail("einsum", "invalid character '", c, "' in subscripts '", subscripts, "'");
    t.letters.push_back(l);
  }
  return t;
}

Labels expand(const Term& t, int ellipsis_dims) {
  if (t.ellipsis_at < 0) return t.letters;
  Labels out(t.letters.begin(), t.letters.begin() + t.ellipsis_at);
  for (int e = 0; e < ellipsis_dims; ++e) out.push_back(kEllipsisBase + e);
  out.insert(out.end(), t.letters.begin() + t.ellipsis_at, t.letters.end());
  return out;
}

Parsed parse(const std::string& subscripts_in, const std::vector<Array>& ops) {
  std::string subscripts;
  for (char c : subscripts_in) {
    if (c != ' ') subscripts += c;
  }
  std::string in_str = subscripts, out_str;
  bool explicit_out = false;
  size_t arrow = subscripts.find("->");
  if (arrow != std::string::npos) {
    explicit_out = true;
    in_str = subscripts.substr(0, arrow);
    out_str = subscripts.substr(arrow + 2);
    if (out_str.find("->") != std::string::npos || out_str.find(',') != std::string::npos) {
      fail("einsum", "subscripts '", subscripts_in, "' have more than one output");
    }
  } else if (subscripts.find('-') != std::string::npos ||
             subscripts.find('>') != std::string::npos) {
    fail("einsum", "invalid '->' in subscripts '", subscripts_in, "'");
  }
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = in_str.find(',', start);
    terms.push_back(in_str.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ops.size()) {
    fail("einsum", "subscripts '", subscripts_in, "' name ", terms.size(), " operands, got ",
         ops.size());
  }
  Parsed p;
  int max_ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    detail::check_valid("einsum", ops[i]);
    Term t = parse_term(terms[i], subscripts_in);
    int nd = ops[i].ndim();
    int n = static_cast<int>(t.letters.size());
    if (t.ellipsis_at < 0 ? n != nd : n > nd) {
      fail("einsum", "operand ", i, " has ", nd, " dims (", shape_str(ops[i].shape()),
           ") but its subscripts '", terms[i], "' name ", n);
    }
    int ell = t.ellipsis_at < 0 ? 0 : nd - n;
    max_ell = std::max(max_ell, ell);
    // Right-aligned: shifted below once the longest '...' is known.
    p.inputs.push_back(expand(t, ell));
  }
  // Shift each operand's ellipsis labels so they align from the right.
  for (size_t i = 0; i < terms.size(); ++i) {
    int ell = 0;
    for (int x : p.inputs[i]) ell += x >= kEllipsisBase;
    for (int& x : p.inputs[i]) {
      if (x >= kEllipsisBase) x += max_ell - ell;
    }
  }
  std::map<int, int> count;
  for (const Labels& l : p.inputs) {
    for (int x : l) ++count[x];
  }
  if (explicit_out) {
    Term t = parse_term(out_str, subscripts_in);
    p.output = expand(t, max_ell);
    std::set<int> seen;
    for (int x : p.output) {
      if (!seen.insert(x).second) {
        fail("einsum", "output subscripts of '", subscripts_in, "' repeat a label");
      }
      if (x < kEllipsisBase && !count.count(x)) {
        fail("einsum", "output label in '", subscripts_in, "' is not in any input");
      }
    }
  } else {
    for (int e = 0; e < max_ell; ++e) p.output.push_back(kEllipsisBase + e);
    for (auto [x, c] : count) {
      if (x < kEllipsisBase && c == 1) p.output.push_back(x);
    }
  }
  return p;
}

struct Operand {
  Array x;
  Labels names;
};

int64_t label_size(const Operand& o, int label) {
  auto it = std::find(o.names.begin(), o.names.end(), label);
  return it == o.names.end() ? 1 : o.x.shape()[it - o.names.begin()];
}

bool has(const Labels& l, int x) { return std::find(l.begin(), l.end(), x) != l.end(); }

// Sums x over the dims at `axes` (sorted), dropping those names.
void sum_out(Operand& o, const std::vector<int>& axes) {
  if (axes.empty()) return;
  Axes ax(axes.begin(), axes.end());
  o.x = sum(o.x, ax);
  Labels kept;
  for (int i = 0; i < static_cast<int>(o.names.size()); ++i) {
    if (!std::count(axes.begin(), axes.end(), i)) kept.push_back(o.names[i]);
  }
  o.names = kept;
}

// Step 1 for one operand: diagonals of repeated labels, then labels needed nowhere else.
void reduce_alone(Operand& o, const std::set<int>& needed_elsewhere) {
  Labels distinct;
  for (int l : o.names) {
    if (!has(distinct, l)) distinct.push_back(l);
  }
  for (int label : distinct) {
    std::vector<int> axes;
    for (int i = 0; i < static_cast<int>(o.names.size()); ++i) {
      if (o.names[i] == label) axes.push_back(i);
    }
    if (axes.size() < 2) continue;
    for (int a : axes) {
      if (o.x.shape()[a] != o.x.shape()[axes[0]]) {
        fail("einsum", "repeated label has dims of different sizes in an operand of shape ",
             shape_str(o.x.shape()));
      }
    }
    Array first = iota(DType::kI32, o.x.shape(), axes[0]), mask;
    for (size_t r = 1; r < axes.size(); ++r) {
      Array eq = equal(first, iota(DType::kI32, o.x.shape(), axes[r]));
      mask = mask.valid() ? logical_and(mask, eq) : eq;
    }
    o.x = where(mask, o.x, zeros_like(o.x));
    // As JAX: a label still needed keeps its last occurrence (sum over axes[:-1]).
    if (needed_elsewhere.count(label)) axes.pop_back();
    sum_out(o, axes);
  }
  std::vector<int> alone;
  for (int i = 0; i < static_cast<int>(o.names.size()); ++i) {
    if (!needed_elsewhere.count(o.names[i])) alone.push_back(i);
  }
  sum_out(o, alone);
}

Operand contract_pair(const Operand& lhs, const Operand& rhs, const std::set<int>& keep,
                      DType dtype) {
  DotDims dims;
  Labels out_names, lhs_free, rhs_free;
  for (int i = 0; i < static_cast<int>(lhs.names.size()); ++i) {
    int l = lhs.names[i];
    auto it = std::find(rhs.names.begin(), rhs.names.end(), l);
    if (it == rhs.names.end()) {
      lhs_free.push_back(l);
      continue;
    }
    int j = static_cast<int>(it - rhs.names.begin());
    if (keep.count(l)) {
      dims.lhs_batch.push_back(i);
      dims.rhs_batch.push_back(j);
      out_names.push_back(l);
    } else {
      dims.lhs_contract.push_back(i);
      dims.rhs_contract.push_back(j);
    }
  }
  for (int l : rhs.names) {
    if (!has(lhs.names, l)) rhs_free.push_back(l);
  }
  out_names.insert(out_names.end(), lhs_free.begin(), lhs_free.end());
  out_names.insert(out_names.end(), rhs_free.begin(), rhs_free.end());
  return {dot_general(lhs.x, rhs.x, dims, dtype), out_names};
}

// Labels of a contraction of a and b that must survive: the output's and the others'.
std::set<int> kept_labels(const std::vector<Operand>& ops, size_t a, size_t b,
                          const Labels& output) {
  std::set<int> keep(output.begin(), output.end());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (k != a && k != b) keep.insert(ops[k].names.begin(), ops[k].names.end());
  }
  return keep;
}

struct Plan {
  std::vector<Operand> ops;
  Labels output;
  DType dtype;
  bool weak;
};

Plan prepare(const std::string& subscripts, const std::vector<Array>& operands) {
  if (operands.empty()) fail("einsum", "needs at least one operand");
  Parsed p = parse(subscripts, operands);
  Plan plan;
  TypeInfo t = detail::result_type(operands);
  plan.dtype = t.dtype;
  plan.weak = t.weak;
  plan.output = p.output;
  // Sizes per label; a size-1 dim broadcasts against another size (it is squeezed out).
  std::map<int, int64_t> size;
  for (size_t i = 0; i < operands.size(); ++i) {
    for (size_t d = 0; d < p.inputs[i].size(); ++d) {
      int64_t n = operands[i].shape()[d];
      int64_t& s = size.try_emplace(p.inputs[i][d], n).first->second;
      if (s == 1) s = n;
      if (n != 1 && n != s) {
        fail("einsum", "label has sizes ", s, " and ", n, " in '", subscripts, "' (operand ", i,
             " of shape ", shape_str(operands[i].shape()), ")");
      }
    }
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    Operand o{detail::convert(operands[i], plan.dtype), {}};
    Axes squeeze_axes;
    for (size_t d = 0; d < p.inputs[i].size(); ++d) {
      int l = p.inputs[i][d];
      if (operands[i].shape()[d] == 1 && size[l] != 1) {
        squeeze_axes.push_back(static_cast<int64_t>(d));
      } else {
        o.names.push_back(l);
      }
    }
    if (!squeeze_axes.empty()) o.x = squeeze(o.x, squeeze_axes);
    plan.ops.push_back(std::move(o));
  }
  // An output label whose every dim was squeezed (size 1 broadcast away) cannot happen: some
  // operand holds the size > 1. Output '...' dims no operand has are added at the end.
  return plan;
}

void reduce_all_alone(Plan& plan) {
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    std::set<int> elsewhere(plan.output.begin(), plan.output.end());
    for (size_t k = 0; k < plan.ops.size(); ++k) {
      if (k != i) elsewhere.insert(plan.ops[k].names.begin(), plan.ops[k].names.end());
    }
    reduce_alone(plan.ops[i], elsewhere);
  }
}

// The next pair to contract: the smallest result, ties to the lowest (i, j).
std::pair<size_t, size_t> pick_pair(const Plan& plan) {
  std::pair<size_t, size_t> best{0, 1};
  double best_size = -1;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    for (size_t j = i + 1; j < plan.ops.size(); ++j) {
      std::set<int> keep = kept_labels(plan.ops, i, j, plan.output);
      std::set<int> result;
      double n = 1;
      for (const Operand* o : {&plan.ops[i], &plan.ops[j]}) {
        for (int l : o->names) {
          if (keep.count(l) && result.insert(l).second) n *= static_cast<double>(label_size(*o, l));
        }
      }
      if (best_size < 0 || n < best_size) {
        best_size = n;
        best = {i, j};
      }
    }
  }
  return best;
}

}  // namespace

std::vector<std::pair<int, int>> einsum_path(const std::string& subscripts,
                                             const std::vector<Array>& operands) {
  Plan plan = prepare(subscripts, operands);
  reduce_all_alone(plan);  // lazy nodes only: nothing is computed
  std::vector<std::pair<int, int>> path;
  // Shapes only: contract symbolic stand-ins (names and sizes) instead of arrays.
  while (plan.ops.size() > 1) {
    auto [i, j] = pick_pair(plan);
    path.emplace_back(static_cast<int>(i), static_cast<int>(j));
    std::set<int> keep = kept_labels(plan.ops, i, j, plan.output);
    Operand merged;
    Shape shape;
    for (const Operand* o : {&plan.ops[i], &plan.ops[j]}) {
      for (int l : o->names) {
        if (keep.count(l) && !has(merged.names, l)) {
          merged.names.push_back(l);
          shape.push_back(label_size(*o, l));
        }
      }
    }
    merged.x = zeros(shape, plan.dtype);
    plan.ops.erase(plan.ops.begin() + j);
    plan.ops.erase(plan.ops.begin() + i);
    plan.ops.push_back(merged);
  }
  return path;
}

Array einsum(const std::string& subscripts, const std::vector<Array>& operands) {
  Plan plan = prepare(subscripts, operands);
  reduce_all_alone(plan);
  while (plan.ops.size() > 1) {
    auto [i, j] = pick_pair(plan);
    std::set<int> keep = kept_labels(plan.ops, i, j, plan.output);
    Operand merged = contract_pair(plan.ops[i], plan.ops[j], keep, plan.dtype);
    plan.ops.erase(plan.ops.begin() + j);
    plan.ops.erase(plan.ops.begin() + i);
    plan.ops.push_back(std::move(merged));
  }
  Operand& r = plan.ops[0];
  // Output '...' dims that no operand had (all were size 1 or absent): add them as size 1.
  for (int l : plan.output) {
    if (!has(r.names, l)) {
      r.x = expand_dims(r.x, {static_cast<int64_t>(r.names.size())});
      r.names.push_back(l);
    }
  }
  std::vector<int> perm;
  for (int l : plan.output) {
    perm.push_back(
        static_cast<int>(std::find(r.names.begin(), r.names.end(), l) - r.names.begin()));
  }
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int>(k);
  Array out = identity ? r.x : transpose(r.x, perm);
  return detail::convert(out, plan.dtype, plan.weak);
}

}  // namespace graft
