// The backend seam: what core, jit and the control-flow kernels need from a device backend.
//
// A Backend compiles a Program (core/ir/program.h) into an Executable, whose buffer plan and
// donation are decided at compile time, and evaluates single pending nodes for eager code.
// Backends live in their own Bazel targets (//core/backend/cpu) and register themselves when
// linked; core itself knows no kernels, no oneDNN and no LLVM.
//
// Threads: a backend and its executables are shared and used by any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/array.h"
#include "core/ir/program.h"

namespace graft {

// Buffers of a program's values, one per input or output (in the backend's memory).
using Buffers = std::vector<std::shared_ptr<Buffer>>;

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs the program over `args` (one per program input; pending ones are evaluated first)
  // and returns its outputs, evaluated. Arguments donated at compile time are consumed:
  // their buffers move into the run (reading them afterwards is an error). An output that is
  // a kept argument is that argument. If the run throws (a failed allocation, say), every
  // donated argument the run had not yet written is readable again, with its old value; one
  // it wrote in place stays consumed.
  std::vector<Array> run(const std::vector<Array>& args) const;
  // The run itself, over the table of buffers: `args` holds one buffer per program input
  // and is moved from; a donated argument's buffer may be overwritten when `args` holds its
  // only reference. Returns one buffer per program output. If it throws, `args[i]` holds
  // again each argument buffer it had not written (null for one it wrote in place).
  virtual Buffers run_buffers(Buffers& args) const = 0;
  // The same run reading its arguments where they are: `args[i]` points at input i's buffer,
  // which is neither moved nor written (for programs without donated inputs: eager ops read
  // their producers' buffers this way, with no references changing hands). Writes one buffer
  // per output into `outputs`. A backend may override it to skip the table's copies.
  virtual void run_reading(std::shared_ptr<Buffer>* const* args, Buffers& outputs) const;
  // The program it runs (as compiled: after jit's passes) and which inputs are donated.
  const Program& program() const { return *program_; }
  const std::shared_ptr<const Program>& program_ptr() const { return program_; }
  const std::vector<bool>& donated() const { return donated_; }
  // Planned memory of the values the program defines (arguments and constants excluded):
  // the peak with reuse, and the sum without.
  virtual int64_t peak_bytes() const = 0;
  virtual int64_t total_bytes() const = 0;

 protected:
  Executable(std::shared_ptr<const Program> program, std::vector<bool> donated);

 private:
  std::shared_ptr<const Program> program_;
  std::vector<bool> donated_;
  // Per output: the program input it is when that input is kept (not donated), else -1;
  // worked out once here, not on every call.
  std::vector<int> kept_argument_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // `donated[i]`: program input i may be overwritten (and is consumed by run). Eager ops
  // come here too, as one-equation programs (core/backend/eager.h caches them).
  virtual std::shared_ptr<const Executable> compile(std::shared_ptr<const Program> program,
                                                    std::vector<bool> donated = {}) const = 0;
  // Device memory on the backend's device `device` (0..device_count()-1; the CPU has one
  // memory for all its virtual devices), and copies between it and the host.
  virtual std::shared_ptr<Buffer> allocate(size_t bytes, int device = 0) const = 0;
  virtual void copy_to_host(const Buffer& src, void* dst, size_t bytes) const = 0;
  virtual std::shared_ptr<Buffer> copy_from_host(const void* src, size_t bytes,
                                                 int device = 0) const = 0;
  // Devices with memory of their own (GPUs); 0 for the host backend, whose buffers are host
  // memory (Buffer::on_host).
  virtual int device_count() const { return 0; }
};

// The backend eval and jit use: the one registered. Throws graft::Error when the program was
// linked without one (depend on //core/backend/cpu).
const Backend& default_backend();
// Registers `b`; a backend's target calls it from a static initializer and gets true back,
// so that it can initialize a static. The host backend ("cpu") becomes the default; a
// backend with devices of its own ("cuda") becomes the device backend.
bool register_backend(std::unique_ptr<Backend> b);

// The device backend linked in (built with --config=cuda), or null. Arrays whose buffers are
// device memory (Buffer::device() >= 0) are computed by it: eval and jit run an op on it
// when any operand lives on one of its devices (host operands are copied there).
const Backend* device_backend();
// The backend that computes an op over these buffers (see device_backend); graft::Error
// "[eval] ..." when they live on different devices.
const Backend& backend_for(const std::shared_ptr<Buffer>* const* buffers, size_t n);
// `b`'s bytes on the host: `b` itself when it is host memory, else a host copy.
std::shared_ptr<const Buffer> to_host(const std::shared_ptr<Buffer>& b);

}  // namespace graft
