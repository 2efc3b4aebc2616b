#include "core/backend/cuda/attention/cudnn_graph_builder.h"

#include <string>

#include "core/error.h"

namespace graft::cuda::cudnn {

int64_t GraphBuilder::add(int64_t uid, const Dims& dims, const Dims& strides, cudnnDataType_t type,
                          bool is_virtual, bool by_value) {
  if (tensors_.count(uid) != 0)
    throw Error("[cuda] cuDNN graph: tensor uid " + std::to_string(uid) + " used twice");
  Descriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  d.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, type)
      .set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims)
      .set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides)
      .set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
      .set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
  if (is_virtual) d.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
  if (by_value) d.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  d.finalize("tensor " + std::to_string(uid));
  tensors_.emplace(uid, Tensor{std::move(d), dims, strides});
  return uid;
}

int64_t GraphBuilder::tensor(int64_t uid, const Dims& dims, const Dims& strides,
                             cudnnDataType_t type) {
  return add(uid, dims, strides, type, false, false);
}

int64_t GraphBuilder::scalar(int64_t uid, cudnnDataType_t type) {
  return add(uid, {1, 1, 1, 1}, {1, 1, 1, 1}, type, false, true);
}

int64_t GraphBuilder::virt(const Dims& dims, const Dims& strides, cudnnDataType_t type) {
  return add(next_virtual_++, dims, strides, type, true, false);
}

int64_t GraphBuilder::virt_like(int64_t x, cudnnDataType_t type) {
  const Tensor& t = tensors_.at(x);
  return virt(Dims(t.dims), Dims(t.strides), type);
}

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t t, int64_t y,
                             cudnnDataType_t compute, std::optional<int64_t> axis) {
  Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .set_dtype(CUDNN_ATTR_POINTWISE_MATH_PREC, compute);
  if (axis) pw.set_int64(CUDNN_ATTR_POINTWISE_AXIS, *axis);
  pw.finalize("pointwise descriptor");

  Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, at(x))
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, at(y));
  if (b >= 0) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, at(b));
  if (t >= 0) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, at(t));
  // cudnn-frontend always sets both blend factors to 1 (y = op(x, b), no blending).
  op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f)
      .set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0f);
  op.finalize("pointwise operation");
  op_params_.push_back(std::move(pw));
  ops_.push_back(std::move(op));
}

void GraphBuilder::matmul(int64_t a, int64_t b, int64_t c) {
  Descriptor mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  mm.set_dtype(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).finalize("matmul descriptor");
  Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, at(a))
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, at(b))
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, at(c))
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
  op.finalize("matmul operation");
  op_params_.push_back(std::move(mm));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t reduce, int64_t x, int64_t y) {
  Descriptor r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  r.set_dtype(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce)
      .set_bool(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, false);  // cudnn-frontend's default
  r.finalize("reduction descriptor");
  Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)
      .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, at(x))
      .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, at(y));
  op.finalize("reduction operation");
  op_params_.push_back(std::move(r));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reshape(int64_t x, int64_t y) {
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, at(x))
      .set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, at(y));
  op.finalize("reshape operation");
  ops_.push_back(std::move(op));
}

cudnnStatus_t GraphBuilder::finalize() {
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Descriptor& op : ops_) raw.push_back(op.get());
  graph_.emplace(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph_->set_descs(CUDNN_ATTR_OPERATIONGRAPH_OPS, raw);
  cudnnStatus_t status = graph_->try_finalize();
  if (status != CUDNN_STATUS_SUCCESS && !not_supported(status)) {
    check(status, "cudnnBackendFinalize(operation graph)");
  }
  return status;
}

}  // namespace graft::cuda::cudnn
