// The program IR (a jaxpr): a traced function as typed values and equations, what jit's passes
// rewrite, what backends compile, and what control-flow primitives hold as their bodies.
//
// Values are numbered; each has an aval. A program lists its input ids (one per flat argument),
// its constants (id and an evaluated Array), its instructions (equations) in topological order
// (a primitive applied to input ids, defining output ids) and its output ids. A primitive with
// bodies (scan, cond, while_loop) holds them as shared sub-programs (Primitive::sub_programs),
// so the printer, the passes and the backends see inside them. Passes take a program and
// return a new one; ids of values a pass drops simply stop being used, so ids are stable.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/sharding/axis.h"
#include "core/ir/graph.h"
#include "core/ir/primitive.h"

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
  std::vector<Aval> input_avals() const;
  std::vector<Aval> output_avals() const;
};

// Structural equality: the same values, constants (compared by value), instructions (same
// primitive and same_params, which compares nested bodies the same way) and outputs. Two
// traces of one function are equal.
bool same_program(const Program& a, const Program& b);
// A hash consistent with same_program (primitives, shapes, wiring and bodies, recursively;
// not parameters).
size_t hash_program(const Program& p);

// Lowers a traced graph: every pending node reachable from the outputs becomes an
// instruction (sub-graphs that do not depend on the inputs too, so that constant folding can
// evaluate them once); evaluated arrays become constants. Returns nullopt when the graph
// reaches a placeholder that is not one of g.inputs (the function closes over a value traced
// by an outer transform: such a program cannot be cached).
// `effects` are outputs of side-effecting nodes (debug_print) recorded while tracing: those
// that depend only on g's inputs and constants become instructions too.
std::optional<Program> lower(const Graph& g, const std::vector<Array>& effects = {});

// Whether a result is too big to bake into a program as a constant: over a MiB and larger
// than its operands (broadcasts, iotas). jit's fold_constants leaves such instructions
// unfolded, and lowering a loop body keeps such broadcasts as body instructions.
bool too_big_to_fold(int64_t in_bytes, int64_t out_bytes);

// A function traced into a closed program: values of outer traces it used (tracers that do
// not depend on its own arguments) are lifted into leading inputs, `consts`. program's inputs
// are [consts, arguments].
struct ClosedProgram {
  std::shared_ptr<const Program> program;
  std::vector<Array> consts;
  // The program's arguments for the traced function's arguments `xs`: [consts, xs].
  std::vector<Array> args(const std::vector<Array>& xs) const {
    std::vector<Array> all = consts;
    all.insert(all.end(), xs.begin(), xs.end());
    return all;
  }
};
// `binds`: the named axes this trace binds (pmap's, a named vmap's): collectives over them
// belong to the program even when they read none of its arguments (axis_index).
ClosedProgram trace_closed(const FlatFn& fn, const std::vector<Aval>& avals, AxisMask binds = 0);

// Applies the program's instructions to `args` with bind (shape rules included), so the
// result is an ordinary graph that transforms and eval treat like any other: how rules and
// eager code run a body.
std::vector<Array> run_program(const Program& p, const std::vector<Array>& args);
// run_program as a FlatFn that keeps the program alive.
FlatFn program_fn(std::shared_ptr<const Program> p);

// The program as text, in make_graph's jaxpr-like format (scalar constants inline); bodies
// of control-flow primitives are printed nested, indented under their instruction.
std::string print_program(const Program& p);
// Printer pieces: variable names a, ..., z, ba, bb, ... as in jaxprs, and an evaluated scalar
// as a typed literal ("2.0:f32[]").
std::string var_name(int i);
std::string literal(const Array& a);

}  // namespace graft
