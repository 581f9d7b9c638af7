// Where a tensor lives: `cpu`, `cpu:N` (virtual CPU devices), `cuda` (the current GPU) or `cuda:N`.
// Strings are parsed strictly, with PyTorch's grammar (c10/core/Device.cpp): `type` or
// `type:index`, the index without sign or leading zero.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

const char* device_type_name(DeviceType t);

class Device {
 public:
  /// index -1 means "the current device of that type" (for the CPU: cpu:0).
  Device(DeviceType type, int index = -1);  // NOLINT: Device(kCUDA) reads naturally
  /// Parses "cpu", "cuda", "cuda:1", ...; a malformed string throws ember::Error quoting it.
  Device(std::string_view s);                             // NOLINT: tensor.to("cuda") like PyTorch
  Device(const char* s) : Device(std::string_view(s)) {}  // NOLINT
  Device(const std::string& s) : Device(std::string_view(s)) {}  // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }

  /// "cpu", "cpu:1", "cuda", "cuda:0".
  std::string str() const;

  // `cpu` and `cpu:0` are the same device; `cuda` (current) and `cuda:0` are different values.
  bool operator==(const Device& o) const {
    return type_ == o.type_ &&
           (type_ == DeviceType::CPU ? std::max(index_, 0) == std::max(o.index_, 0)
                                     : index_ == o.index_);
  }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int index_;
};

std::ostream& operator<<(std::ostream& os, const Device& d);
std::ostream& operator<<(std::ostream& os, DeviceType t);

}  // namespace ember

template <>
struct std::hash<ember::Device> {
  size_t operator()(const ember::Device& d) const {
    int index = d.is_cpu() && d.index() < 0 ? 0 : d.index();
    return std::hash<int>()(static_cast<int>(d.type()) * 1000003 + index);
  }
};
