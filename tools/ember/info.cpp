// `ember info`: what this machine offers ember: the CPU and every GPU, or why no GPU is usable.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "ember/backend/cpu/conv_dnnl.h"
#include "ember/backend/cuda/cuda_backend.h"
#include "ember/backend/cudnn.h"
#include "ember/ember.h"
#include "tools/ember/args.h"
#include "tools/ember/commands.h"

namespace ember::cli {
namespace {

using json = nlohmann::json;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string simd_level() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
  if (__builtin_cpu_supports("avx")) return "AVX";
  return "SSE";
#else
  return "unknown";
#endif
}

std::string version(int v) {
  if (v <= 0) return "n/a";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

json collect() {
  json j;
  json cpu = {{"model", cpu_model()},
              {"logical_cores", std::thread::hardware_concurrency()},
              {"simd", simd_level()},
              {"ember_compiled_for", cpu::compiled_simd()},
              {"threads", get_num_threads()},
              {"blas", "OpenBLAS, one thread per call; ember's pool splits products"},
              {"convolution", cpu::have_dnnl() ? "oneDNN on ember's pool" : "im2col + GEMM"}};
  json devices = json::array();
  for (int i = 0; i < cpu::device_count(); ++i) {
    CachingAllocator& a = device_backend(kCPU).allocator(i);
    devices.push_back({{"device", "cpu:" + std::to_string(i)},
                       {"total_memory", a.memory().total_memory()},
                       {"allocated", a.memory_allocated()},
                       {"reserved", a.memory_reserved()}});
  }
  cpu["devices"] = devices;
  if (auto limit = cpu::memory_limit()) cpu["memory_limit"] = *limit;
  j["cpu"] = cpu;

  json gpu;
  gpu["built_with_cuda"] = cuda::is_built();
  gpu["available"] = cuda::is_available();
  gpu["device_count"] = cuda::device_count();
  gpu["cuda_visible_devices"] = cuda::visible_devices();
  gpu["driver_version"] = version(cuda::driver_version());
  gpu["runtime_version"] = version(cuda::runtime_version());
  if (!cuda::is_available()) gpu["reason"] = cuda::unavailable_reason();
  // cuDNN numbers its versions major * 1000 + minor * 100 + patch before 9, major * 10000 after.
  if (int64_t v = cudnn::version()) {
    int64_t major = v >= 90000 ? v / 10000 : v / 1000, rest = v >= 90000 ? v % 10000 : v % 1000;
    gpu["cudnn_version"] = std::to_string(major) + "." + std::to_string(rest / 100) + "." +
                           std::to_string(rest % 100);
  }
  json gpus = json::array();
  for (int i = 0; i < cuda::device_count(); ++i) {
    cuda::DeviceProperties p = cuda::get_device_properties(i);
    auto [free_bytes, total] = cuda::mem_get_info(i);
    json peers = json::array();
    for (int k = 0; k < cuda::device_count(); ++k)
      if (k != i && cuda::can_device_access_peer(i, k)) peers.push_back(k);
    gpus.push_back({{"device", "cuda:" + std::to_string(i)},
                    {"name", p.name},
                    {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
                    {"total_memory", p.total_memory},
                    {"free_memory", free_bytes},
                    {"multiprocessors", p.multi_processor_count},
                    {"clock_mhz", p.clock_rate_khz / 1000},
                    {"memory_clock_mhz", p.memory_clock_rate_khz / 1000},
                    {"memory_bus_width", p.memory_bus_width},
                    {"l2_cache", p.l2_cache_size},
                    {"pci_bus_id", p.pci_bus_id},
                    {"uuid", p.uuid},
                    {"peer_access", peers}});
  }
  gpu["devices"] = gpus;
  j["gpu"] = gpu;
  return j;
}

void print_text(const json& j) {
  const json& c = j["cpu"];
  std::cout << "CPU: " << c["model"].get<std::string>() << "\n"
            << "  logical cores " << c["logical_cores"] << ", SIMD " << c["simd"].get<std::string>()
            << " (ember compiled for " << c["ember_compiled_for"].get<std::string>()
            << "), ember threads " << c["threads"] << "\n"
            << "  matmul: " << c["blas"].get<std::string>() << "\n"
            << "  conv2d: " << c["convolution"].get<std::string>() << "\n";
  for (const json& d : c["devices"])
    std::cout << "  " << d["device"].get<std::string>() << ": " << format_bytes(d["total_memory"])
              << (c.contains("memory_limit") ? " (EMBER_CPU_MEMORY_LIMIT)" : "") << ", ember has "
              << format_bytes(d["allocated"]) << " allocated, " << format_bytes(d["reserved"])
              << " reserved\n";
  const json& g = j["gpu"];
  std::cout << "GPU: ";
  if (!g["available"].get<bool>()) {
    std::cout << "none usable: " << g["reason"].get<std::string>() << "\n";
  } else {
    std::cout << g["device_count"] << " device(s), driver "
              << g["driver_version"].get<std::string>() << ", runtime "
              << g["runtime_version"].get<std::string>() << "\n";
  }
  std::string visible = g["cuda_visible_devices"];
  std::cout << "  CUDA_VISIBLE_DEVICES=" << (visible.empty() ? "(unset)" : visible) << "\n";
  if (g.contains("cudnn_version"))
    std::cout << "  cuDNN " << g["cudnn_version"].get<std::string>()
              << " (convolutions and recurrent layers; off with torch.backends.cudnn.enabled = "
                 "False)\n";
  for (const json& d : g["devices"]) {
    std::cout << "  " << d["device"].get<std::string>() << ": " << d["name"].get<std::string>()
              << ", compute capability " << d["compute_capability"].get<std::string>() << ", "
              << d["multiprocessors"] << " SMs, " << format_bytes(d["free_memory"]) << " free of "
              << format_bytes(d["total_memory"]) << "\n"
              << "      clocks " << d["clock_mhz"] << " MHz (memory " << d["memory_clock_mhz"]
              << " MHz, " << d["memory_bus_width"] << "-bit), L2 " << format_bytes(d["l2_cache"])
              << ", PCI " << d["pci_bus_id"].get<std::string>() << ", "
              << d["uuid"].get<std::string>()
              << ", peer access: " << (d["peer_access"].empty() ? "none" : d["peer_access"].dump())
              << "\n";
  }
}

}  // namespace

int info(int argc, char** argv) {
  Args args(argc, argv, {}, {"json", "help"});
  if (args.flag("help")) {
    std::cout << "usage: ember info [--json]\n";
    return 0;
  }
  json j = collect();
  if (args.flag("json"))
    std::cout << j.dump(2) << "\n";
  else
    print_text(j);
  return 0;
}

}  // namespace ember::cli
