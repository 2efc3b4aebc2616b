// Builds a cuDNN backend operation graph one operation at a time, the way cudnn-frontend
// lowers its nodes (tensor, pointwise, matmul, reduction, reshape descriptors, each
// finalized as it is added), and owns every descriptor it made until the graph is dropped.
//
// Tensors are named by uid: the caller picks the uids of the tensors it binds at execution
// (inputs, outputs, by-value scalars, workspace intermediates); virtual tensors get fresh
// uids from 1000 up. Every tensor is 16-byte aligned, as cudnn-frontend declares them.
//
// Errors: a rejected attribute or operation throws graft::Error "[cuda] ..."; finalize()
// returns the op graph's status, so "not supported" can be told from a bug. One thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/backend/cuda/attention/cudnn_backend.h"

namespace graft::cuda::cudnn {

class GraphBuilder {
 public:
  using Dims = std::vector<int64_t>;

  // A tensor bound at execution (input, output or workspace intermediate).
  int64_t tensor(int64_t uid, const Dims& dims, const Dims& strides, cudnnDataType_t type);
  // A scalar passed by value at execution (rank 4, all ones, as cudnn-frontend expands it).
  int64_t scalar(int64_t uid, cudnnDataType_t type);
  // A virtual tensor (never in memory).
  int64_t virt(const Dims& dims, const Dims& strides, cudnnDataType_t type);
  // A virtual tensor with x's dims and strides.
  int64_t virt_like(int64_t x, cudnnDataType_t type);

  // y = mode(x [, b [, t]]) computed in `compute`; b, t: -1 when absent. axis: GEN_INDEX's.
  void pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t t, int64_t y,
                 cudnnDataType_t compute, std::optional<int64_t> axis = std::nullopt);
  void matmul(int64_t a, int64_t b, int64_t c);                    // f32 accumulation
  void reduction(cudnnReduceTensorOp_t op, int64_t x, int64_t y);  // f32
  void reshape(int64_t x, int64_t y);

  // Finalizes the operation graph (without a handle: cuDNN >= 9.8 needs none until plans).
  // Returns the status: CUDNN_STATUS_SUCCESS or a not_supported() one; throws otherwise.
  cudnnStatus_t finalize();
  const Descriptor& graph() const { return *graph_; }
  const Dims& dims(int64_t uid) const { return tensors_.at(uid).dims; }
  const Dims& strides(int64_t uid) const { return tensors_.at(uid).strides; }
  int num_ops() const { return static_cast<int>(ops_.size()); }

 private:
  struct Tensor {
    Descriptor desc;
    Dims dims, strides;
  };
  int64_t add(int64_t uid, const Dims& dims, const Dims& strides, cudnnDataType_t type,
              bool is_virtual, bool by_value);
  const Descriptor& at(int64_t uid) const { return tensors_.at(uid).desc; }

  std::map<int64_t, Tensor> tensors_;
  std::vector<Descriptor> ops_;
  std::vector<Descriptor> op_params_;  // pointwise / matmul / reduction descriptors
  std::optional<Descriptor> graph_;
  int64_t next_virtual_ = 1000;
};

}  // namespace graft::cuda::cudnn
