#include "ember/core/device.h"

#include <algorithm>

#include "ember/core/error.h"

namespace ember {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
  }
  return "unknown";
}

Device::Device(DeviceType type, int index) : type_(type), index_(index) {
  EMBER_CHECK(index >= -1, "[Device] device index must be -1 (current) or non-negative, got ",
              index, " for ", device_type_name(type));
}

Device::Device(std::string_view s) : type_(DeviceType::CPU), index_(-1) {
  // Grammar: ([a-zA-Z_]+)(?::([1-9]\d*|0))?
  auto invalid = [&] { EMBER_FAIL("Invalid device string: '", s, "'"); };
  size_t i = 0;
  while (i < s.size() && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
  if (i == 0) invalid();
  std::string_view name = s.substr(0, i);
  if (i < s.size()) {
    if (s[i] != ':' || i + 1 == s.size()) invalid();
    std::string_view digits = s.substr(i + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      invalid();
    if (digits.size() > 1 && digits[0] == '0') invalid();
    if (digits.size() > 9) invalid();
    index_ = std::stoi(std::string(digits));
  }
  if (name == "cpu") {
    type_ = DeviceType::CPU;
  } else if (name == "cuda") {
    type_ = DeviceType::CUDA;
  } else {
    EMBER_FAIL("Invalid device string: '", s, "': expected one of cpu, cuda at the start, got '",
               name, "'");
  }
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (index_ >= 0) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << device_type_name(t); }

}  // namespace ember
