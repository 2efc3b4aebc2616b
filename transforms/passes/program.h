// The jit IR: a traced function as a flat program that passes rewrite and the executor runs.
//
// Values are numbered; each has an aval. A program lists its input ids (one per flat argument),
// its constants (id and an evaluated Array), its instructions in topological order (a
// primitive applied to input ids, defining output ids) and its output ids. Passes
// (transforms/passes/passes.h) take a program and return a new one; ids of values a pass drops
// simply stop being used, so ids are stable across passes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/primitive.h"
#include "transforms/graph.h"

namespace graft {

struct Instr {
  std::shared_ptr<const Primitive> prim;
  std::vector<int> in;
  std::vector<int> out;
};

struct Program {
  std::vector<Aval> avals;  // by value id
  std::vector<int> inputs;
  std::vector<int> constants;
  std::vector<Array> constant_values;  // evaluated; parallel to `constants`
  std::vector<Instr> instrs;           // inputs before users
  std::vector<int> outputs;

  int add_value(const Aval& a) {
    avals.push_back(a);
    return static_cast<int>(avals.size()) - 1;
  }
  int add_constant(const Array& value);
  // The constant with id `v`, or null when `v` is not a constant.
  const Array* constant(int v) const;
};

// Lowers a traced graph: every pending node reachable from the outputs becomes an
// instruction (sub-graphs that do not depend on the inputs too, so that constant folding can
// evaluate them once); evaluated arrays become constants. Returns nullopt when the graph
// reaches a placeholder that is not one of g.inputs (the function closes over a value traced
// by an outer transform: such a program cannot be cached).
// `effects` are outputs of side-effecting nodes (debug_print) recorded while tracing: those
// that depend only on g's inputs and constants become instructions too.
std::optional<Program> lower(const Graph& g, const std::vector<Array>& effects = {});

struct BufferPlan;

// Binds the program's instructions on `args` (no tracing, no shape rules: the avals are the
// program's) and evaluates the outputs. With a plan (transforms/passes/passes.h),
// elementwise instructions compute in place into intermediates that die there and into
// arguments marked in `donated` (one flag per argument); donated arguments are then marked
// unusable (Node::donated).
std::vector<Array> execute(const Program& p, const std::vector<Array>& args,
                           const BufferPlan* plan = nullptr, const std::vector<bool>& donated = {});

// The program as text, in make_graph's jaxpr-like format (scalar constants inline).
std::string print_program(const Program& p);

}  // namespace graft
