#!/usr/bin/env python3
"""Writes tests/ingest/data/torch_trace_small.json: a small torch.profiler Chrome trace (python3 only, no torch).

Layout as kineto writes it (pytorch/kineto libkineto/src/output_json.cpp, ChromeTraceLogger::handleActivity and
handleTraceStart; PyTorch's AddGenericMetadata adds the cpu_op args): an object with "schemaVersion",
"deviceProperties", "traceEvents"; complete events {"ph": "X", "cat", "name", "pid", "tid", "ts", "dur", "args"}
with ts/dur in microseconds printed as <us>.<3-digit ns>; cpu_op args "External id", "Input Dims", "Input type"
(and "flops" with with_flops=True); cuda_runtime calls carry "correlation" and the launching op's "External id";
kernels carry "External id", "correlation", "device", "stream", "grid", "block" ...; gpu_memcpy/gpu_memset carry
"bytes"; flow arrows ("ph": "s"/"f", cat "ac2g"), metadata ("ph": "M") and instants ("ph": "i") surround them.
One kernel (clamp_min_) lacks "External id" and is tied to its operator through the runtime call's correlation,
as traces of older kineto versions are.

The workload is a made-up forward step (conv, batch norm, relu, linear, an fp16 mm) on an A100; the expected
totals printed at the end are what tests/ingest/formats_test.cpp asserts.
Usage: python3 tests/ingest/make_chrome_trace.py [OUT]
"""
import os
import sys

PID, TID, GPU_TID = 4242, 4242, 7
BASE_NS = 4719837462000  # trace time of the first event, in ns


class Raw(str):
    """A number written exactly as given (kineto prints <us>.<ns:03>)."""


def us(ns):
    return Raw(f"{ns // 1000}.{ns % 1000:03d}")


def dump(v):
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(dump(x) for x in v) + "]"
    return "{" + ", ".join(f"{dump(k)}: {dump(x)}" for k, x in v.items()) + "}"


events = []
expect = {"kernels": 0, "memops": 0, "kernel_ns": 0, "memop_ns": 0, "fp32": 0, "fp16": 0, "cpu_flops": 0}
next_corr = [100]


def span(cat, name, t0, dur, ext, **args):
    a = {"External id": ext, "Record function id": 0}
    a.update(args)
    events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": TID, "ts": us(BASE_NS + t0),
                   "dur": us(dur), "args": a})


def launch(t0, ext, gpu_name, gpu_t0, gpu_dur, cat="kernel", api="cudaLaunchKernel", link_ext=True, **gpu_args):
    next_corr[0] += 1
    corr = next_corr[0]
    events.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": PID, "tid": TID, "ts": us(BASE_NS + t0),
                   "dur": us(4250), "args": {"External id": ext, "cbid": 211, "correlation": corr}})
    args = {"External id": ext} if link_ext else {}
    args.update({"device": 0, "context": 1, "stream": 7, "correlation": corr})
    args.update(gpu_args)
    events.append({"ph": "X", "cat": cat, "name": gpu_name, "pid": 0, "tid": GPU_TID, "ts": us(BASE_NS + gpu_t0),
                   "dur": us(gpu_dur), "args": args})
    events.append({"ph": "s", "id": corr, "pid": PID, "tid": TID, "ts": us(BASE_NS + t0), "cat": "ac2g",
                   "name": "ac2g"})
    events.append({"ph": "f", "id": corr, "pid": 0, "tid": GPU_TID, "ts": us(BASE_NS + gpu_t0), "cat": "ac2g",
                   "name": "ac2g", "bp": "e"})
    if cat == "kernel":
        expect["kernels"] += 1
        expect["kernel_ns"] += gpu_dur
    else:
        expect["memops"] += 1
        expect["memop_ns"] += gpu_dur


KERNEL_ARGS = {"queued": 0, "registers per thread": 128, "shared memory": 49152, "blocks per SM": 3.555556,
               "warps per SM": 14.222222, "grid": [384, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 25}

# ProfilerStep#1 around everything (a user_annotation: becomes the NVTX-like range of every launch)
span("user_annotation", "ProfilerStep#1", 0, 900000, 1)

# conv2d 8x64x56x56, 3x3, 64 -> 64: FLOPs = 2 * N*K*P*Q * C*R*S (on the outer aten::conv2d, as with_flops does)
conv_flops = 2 * 8 * 64 * 56 * 56 * 64 * 3 * 3
expect["fp32"] += conv_flops
span("cpu_op", "aten::conv2d", 10000, 100000, 2, flops=conv_flops,
     **{"Input Dims": [[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []],
        "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"]})
span("cpu_op", "aten::convolution", 15000, 90000, 3)
span("cpu_op", "aten::_convolution", 18000, 85000, 4)
span("cpu_op", "aten::cudnn_convolution", 20000, 80000, 5)
launch(30000, 5, "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
       "WinogradDataParams<float, float>)", 40000, 12345, **KERNEL_ARGS)
launch(50000, 5, "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
       "warpsize2x2x1_g1_tensor16x8x8_kernel", 60000, 85123, **KERNEL_ARGS)

# batch norm: no FLOPs from torch
span("cpu_op", "aten::batch_norm", 120000, 40000, 6)
span("cpu_op", "aten::_batch_norm_impl_index", 122000, 36000, 7)
span("cpu_op", "aten::cudnn_batch_norm", 124000, 32000, 8)
launch(130000, 8, "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, "
       "float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, "
       "float*, float, float)", 150000, 20480, **KERNEL_ARGS)

# relu_: the kernel has no "External id" (older kineto); tied through the runtime call's correlation
span("cpu_op", "aten::relu_", 170000, 20000, 9)
span("cpu_op", "aten::clamp_min_", 172000, 16000, 10)
launch(175000, 10, "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
       "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::"
       "{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, "
       "2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, "
       "c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
       "const::{lambda(float)#1}, at::detail::Array<char*, 2>)", 200000, 9000, link_ext=False, **KERNEL_ARGS)

# linear 8x512 -> 1000: aten::linear -> aten::t (no kernel), aten::addmm (FLOPs 2*M*N*K) -> sgemm + splitK reduce
addmm_flops = 2 * 8 * 1000 * 512
expect["fp32"] += addmm_flops
span("cpu_op", "aten::linear", 230000, 60000, 11)
span("cpu_op", "aten::t", 232000, 5000, 12, **{"Input Dims": [[1000, 512]], "Input type": ["float"]})
span("cpu_op", "aten::addmm", 240000, 45000, 13, flops=addmm_flops,
     **{"Input Dims": [[1000], [8, 512], [512, 1000], [], []],
        "Input type": ["float", "float", "float", "Scalar", "Scalar"]})
launch(245000, 13, "ampere_sgemm_128x64_tn", 300000, 30001, **KERNEL_ARGS)
launch(260000, 13, "void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>"
       "(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, "
       "float const*, float*, void*, long, float*, int*)", 331000, 3200, **KERNEL_ARGS)

# a CPU-side multiply with FLOPs: no kernel, so its FLOPs cannot be on the GPU totals (a warning says so)
expect["cpu_flops"] += 1000
span("cpu_op", "aten::mul", 300000, 3000, 14, flops=1000,
     **{"Input Dims": [[1000], []], "Input type": ["float", "Scalar"]})

# host-to-device copy and a memset
span("cpu_op", "aten::copy_", 310000, 30000, 15, **{"Input Dims": [[8, 3, 224, 224], [8, 3, 224, 224], []],
                                                    "Input type": ["float", "float", "Scalar"]})
launch(312000, 15, "Memcpy HtoD (Pageable -> Device)", 340000, 2500, cat="gpu_memcpy", api="cudaMemcpyAsync",
       bytes=602112, **{"memory bandwidth (GB/s)": 240.8448})
span("cpu_op", "aten::zero_", 350000, 10000, 16)
span("cpu_op", "aten::fill_", 351000, 8000, 17)
launch(352000, 17, "Memset (Device)", 360000, 1024, cat="gpu_memset", api="cudaMemsetAsync", bytes=4096,
       **{"memory bandwidth (GB/s)": 4.0})

# an fp16 matmul (AMP-style) on tensor cores: FLOPs land under fp16
mm_flops = 2 * 64 * 64 * 64
expect["fp16"] += mm_flops
span("cpu_op", "aten::mm", 400000, 20000, 18, flops=mm_flops,
     **{"Input Dims": [[64, 64], [64, 64]], "Input type": ["c10::Half", "c10::Half"]})
launch(405000, 18, "ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_f2f_tn", 410000, 4096, **KERNEL_ARGS)

# GPU-side copy of the step annotation and other non-work events: never counted as kernels
events.append({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": GPU_TID,
               "ts": us(BASE_NS + 39999), "dur": us(380000), "args": {"External id": 1}})
events.append({"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1501): _call_impl",
               "pid": PID, "tid": TID, "ts": us(BASE_NS + 9000), "dur": us(105000), "args": {"Python id": 3}})
events.append({"ph": "X", "cat": "Trace", "ts": us(BASE_NS), "dur": us(900000), "pid": "Spans",
               "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}})

HEADER = """{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344,
      "computeMajor": 8, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 108
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 166912, "sharedMemPerMultiprocessor": 167936
    }
  ],
  "cupti_version": 18,
  "cuda_runtime_version": 12010,
  "with_flops": 1,
  "record_shapes": 1,
  "cuda_driver_version": 12020,
  "trace_id": "0C1F5B0D7E3A4E6A9F1B2C3D4E5F6A7B",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": ["""

META = [{"name": "process_name", "ph": "M", "ts": us(BASE_NS), "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_name", "ph": "M", "ts": us(BASE_NS), "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "ts": us(BASE_NS), "pid": 0, "tid": GPU_TID,
         "args": {"name": "stream 7 "}}]
END = {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": us(BASE_NS + 900001)}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "data",
                                                             "torch_trace_small.json")
    body = ",\n".join("  " + dump(e) for e in META + events + [END])
    with open(out, "w") as f:
        f.write(HEADER + "\n" + body + "\n  ],\n  \"traceName\": \"/tmp/torch_trace_small.json\"\n}\n")
    print(f"wrote {out}: {len(events) + len(META) + 1} events")
    print(f"kernels {expect['kernels']}, memops {expect['memops']}, kernel time {expect['kernel_ns']} ns, "
          f"all GPU time {expect['kernel_ns'] + expect['memop_ns']} ns")
    print(f"fp32 FLOPs {expect['fp32']}, fp16 FLOPs {expect['fp16']}, CPU-side FLOPs left out {expect['cpu_flops']}")


if __name__ == "__main__":
    main()
