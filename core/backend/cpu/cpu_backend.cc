// The CPU backend: kernels per primitive (kernel.h), the program executor with its buffer
// plan (executable.h), host memory. Linking //core/backend/cpu registers it (alwayslink).
#include <cstring>
#include <utility>

#include "core/backend/backend.h"
#include "core/backend/cpu/executable.h"

namespace graft::cpu {
namespace {

class CpuExecutable : public Executable {
 public:
  CpuExecutable(std::shared_ptr<const Program> p, std::vector<bool> donate)
      : Executable(std::move(p), std::move(donate)),
        plan_(plan_buffers(program(), donated())),
        one_instruction_(is_one_instruction(program())),
        avals_(program(), program().instrs.empty() ? Instr{} : program().instrs[0]) {}

  Buffers run_buffers(Buffers& args) const override { return execute(program(), plan_, args); }
  void run_reading(std::shared_ptr<Buffer>* const* args, Buffers& outputs) const override {
    if (one_instruction_) {
      execute_one_reading(program().instrs[0], avals_, args, outputs);
    } else {
      Executable::run_reading(args, outputs);
    }
  }
  int64_t peak_bytes() const override { return plan_.peak_bytes; }
  int64_t total_bytes() const override { return plan_.total_bytes; }

 private:
  BufferPlan plan_;
  bool one_instruction_;  // an eager op: runs over its arguments' slots, with no table
  InstrAvals avals_;      // of instruction 0, for one_instruction_
};

class CpuBackend : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::shared_ptr<const Executable> compile(std::shared_ptr<const Program> p,
                                            std::vector<bool> donated) const override {
    return std::make_shared<const CpuExecutable>(std::move(p), std::move(donated));
  }
  std::shared_ptr<Buffer> allocate(size_t bytes, int = 0) const override {
    return Buffer::make(bytes);
  }
  void copy_to_host(const Buffer& src, void* dst, size_t bytes) const override {
    if (bytes) std::memcpy(dst, src.data(), bytes);
  }
  std::shared_ptr<Buffer> copy_from_host(const void* src, size_t bytes, int = 0) const override {
    auto b = Buffer::make(bytes);
    if (bytes) std::memcpy(b->data(), src, bytes);
    return b;
  }
};

const bool registered = register_backend(std::make_unique<CpuBackend>());

}  // namespace
}  // namespace graft::cpu
