#include "ridge/dtype.hpp"
#include "ridge/text.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace ridge {

int64_t dtype_bytes(DType t) {
  switch (t) {
    case DType::F64: case DType::I64: return 8;
    case DType::F32: case DType::I32: case DType::Unknown: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::I8: case DType::U8: case DType::Bool: return 1;
  }
  return 4;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "fp32";
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
    case DType::F64: return "fp64";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::Bool: return "bool";
    case DType::Unknown: return "unknown";
  }
  return "unknown";
}

std::optional<DType> parse_dtype(std::string_view s) {
  const std::string l = ascii_lower(s);
  if (l == "fp32" || l == "float32" || l == "f32" || l == "float") return DType::F32;
  if (l == "fp16" || l == "float16" || l == "f16" || l == "half") return DType::F16;
  if (l == "bf16" || l == "bfloat16") return DType::BF16;
  if (l == "fp64" || l == "float64" || l == "f64" || l == "double") return DType::F64;
  if (l == "int64" || l == "i64") return DType::I64;
  if (l == "int32" || l == "i32") return DType::I32;
  if (l == "int8" || l == "i8") return DType::I8;
  if (l == "uint8" || l == "u8") return DType::U8;
  if (l == "bool") return DType::Bool;
  return std::nullopt;
}

bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64; }

bool is_integral(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I8 || t == DType::U8 || t == DType::Bool;
}

namespace {

// onnx.proto TensorProto.DataType numbers of the element types ridge models.
constexpr std::pair<int, DType> kOnnxTypes[] = {
    {1, DType::F32}, {2, DType::U8},    {3, DType::I8},   {6, DType::I32},  {7, DType::I64},
    {9, DType::Bool}, {10, DType::F16}, {11, DType::F64}, {16, DType::BF16},
};

}  // namespace

DType dtype_from_onnx(int t) {
  for (const auto& [onnx, dtype] : kOnnxTypes)
    if (onnx == t) return dtype;
  return DType::Unknown;
}

int onnx_type_of(DType t) {
  for (const auto& [onnx, dtype] : kOnnxTypes)
    if (dtype == t) return onnx;
  return 0;
}

}  // namespace ridge
