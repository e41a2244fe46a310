// The GPU architecture table (data/gpu/architectures.json): it loads, a bad file is a one-line error naming the
// file and the field, and derive() counts tensor FLOPs with the factor of the table it is given.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "support/test_support.hpp"

namespace ridge::ingest {
namespace {

const std::string kShipped = std::string(RIDGE_SOURCE_DIR) + "/data/gpu/architectures.json";

std::string error_of(const std::string& text) {
  try {
    parse_architectures(text, "arch.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Architectures, ShippedTableLoadsWithSources) {
  const ArchitectureTable t = load_architectures(kShipped);
  EXPECT_EQ(t.counted_precision, "fp16");
  EXPECT_EQ(t.tensor_factor("volta"), 512);   // NERSC's HMMA.884 convention
  EXPECT_EQ(t.tensor_factor("turing"), 2048);
  EXPECT_EQ(t.tensor_factor("ampere"), 4096);
  EXPECT_EQ(t.tensor_factor("pascal"), 0);    // no tensor cores
  EXPECT_EQ(t.tensor_factor("no-such"), 0);
  ASSERT_NE(t.find("ampere"), nullptr);
  EXPECT_EQ(t.find("ampere")->tensor_flops_per_inst.at("tf32"), 1024);
  for (const Architecture& a : t.architectures) EXPECT_FALSE(a.source.empty()) << a.name;
  EXPECT_FALSE(t.device_names.empty());
  EXPECT_FALSE(t.kernel_prefixes.empty());
  EXPECT_EQ(builtin_architectures().tensor_factor("hopper"), 4096);
}

TEST(Architectures, BadFilesAreOneLineErrorsNamingFileAndField) {
  const std::string missing = test::temp_dir() + "/no-such-architectures.json";
  try {
    load_architectures(missing);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
  const std::string head = R"({"format": "ridge-gpu-architectures", "counted_precision": "fp16", )";
  const std::string arch = R"("architectures": [{"name": "volta", "tensor_flops_per_inst": {"fp16": 512}, "source": "s"}], )";
  const std::string hints = R"("kernel_prefixes": [])";
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"[1, 2", "not a JSON object"},
           {R"({"format": "other"})", "'format'"},
           {head + R"("architectures": [], "device_names": [], )" + hints + "}", "'architectures'"},
           {head + R"("architectures": [{"name": "volta", "tensor_flops_per_inst": {"fp16": -1}, "source": "s"}], )"
                   R"("device_names": [], )" + hints + "}",
            "tensor_flops_per_inst.fp16"},
           {head + arch + R"("device_names": [{"pattern": "V100", "architecture": "voltaa"}], )" + hints + "}",
            "device_names[0]: unknown architecture 'voltaa'"},
           {head + arch + hints + "}", "missing 'device_names'"}}) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find("arch.json"), std::string::npos) << text;
    EXPECT_NE(e.find(want), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(Architectures, DeriveUsesTheTableItIsGiven) {
  ArchitectureTable t = load_architectures(kShipped);
  for (auto& a : t.architectures)
    if (a.name == "volta") a.tensor_flops_per_inst["fp16"] = 1000;
  Profile p;
  KernelRecord k;
  k.name = "volta_h884gemm_64x64_nn";
  k.device = "Tesla V100-SXM2-16GB";
  k.counters["sm__inst_executed_pipe_tensor.sum"] = Value{10, Count(10), "inst"};
  p.kernels.push_back(k);
  DeriveOptions o;
  o.architectures = &t;
  derive(p, o);
  EXPECT_EQ(p.architecture, "volta");
  EXPECT_EQ(p.tensor_flops_per_inst, 1000);
  ASSERT_TRUE(p.kernels[0].derived.flops_tensor.has_value());
  EXPECT_EQ(*p.kernels[0].derived.flops_tensor, Count(10000));
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find(kShipped) != std::string::npos;
  EXPECT_TRUE(noted) << "the note names the table the factor came from";
}

// --arch takes any name of the table it is given (not a list kept in code); an unknown one is a usage error naming
// the flag, the table's file and the names it lists.
TEST(Architectures, ArchNamesComeFromTheTable) {
  ArchitectureTable t = load_architectures(kShipped);
  t.architectures.push_back(Architecture{"blackwell", {{"fp16", 8192}}, "injected for the test"});
  Profile p;
  KernelRecord k;
  k.name = "some_gemm_kernel";
  k.counters["sm__inst_executed_pipe_tensor.sum"] = Value{2, Count(2), "inst"};
  p.kernels.push_back(k);
  DeriveOptions o;
  o.architectures = &t;
  o.architecture = "blackwell";
  derive(p, o);
  EXPECT_EQ(p.tensor_flops_per_inst, 8192);
  ASSERT_TRUE(p.kernels[0].derived.flops_tensor.has_value());
  EXPECT_EQ(*p.kernels[0].derived.flops_tensor, Count(16384));
  o.architecture = "voltaa";
  try {
    derive(p, o);
    FAIL() << "an unknown --arch was accepted";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--arch: unknown architecture 'voltaa'"), std::string::npos) << m;
    EXPECT_NE(m.find(kShipped), std::string::npos) << m;
    EXPECT_NE(m.find("blackwell"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ridge::ingest
