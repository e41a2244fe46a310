// Tensor element types and their sizes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ridge {

/// Element type of a tensor. `Unknown` when an importer cannot tell.
enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I8, U8, Bool, Unknown };

/// Size of one element in bytes (Unknown -> 4, the common case, flagged elsewhere).
int64_t dtype_bytes(DType t);
/// Short lower-case name: "fp32", "fp16", "bf16", "fp64", "int64", ...
std::string_view dtype_name(DType t);
/// Parses "fp32", "float32", "f32", "fp16", "half", "bf16", "fp64", "double", "int64", ...; nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view s);
/// ridge's element type for an ONNX TensorProto.DataType number (1 float, 7 int64, 10 float16, ...);
/// Unknown for strings, complex and anything ridge does not model.
DType dtype_from_onnx(int onnx_type);
/// The ONNX TensorProto.DataType number of `t` (the inverse of dtype_from_onnx); 0 (UNDEFINED) for Unknown.
int onnx_type_of(DType t);
/// True for floating-point types (whose tensors carry gradients).
bool is_float(DType t);
/// Integer and boolean element types (int64, int32, int8, uint8, bool).
bool is_integral(DType t);

}  // namespace ridge
