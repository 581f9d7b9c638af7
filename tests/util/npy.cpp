#include "tests/util/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "ember/ember.h"

namespace ember::testing {
namespace {

const char* descr(DType t) {
  switch (t) {
    case kBool:
      return "|b1";
    case kUInt8:
      return "|u1";
    case kInt32:
      return "<i4";
    case kInt64:
      return "<i8";
    case kFloat16:
      return "<f2";
    case kFloat32:
      return "<f4";
    case kFloat64:
      return "<f8";
    default:
      EMBER_FAIL("[npy] no NumPy type for ", t);
  }
}

DType from_descr(const std::string& d) {
  for (DType t : {kBool, kUInt8, kInt32, kInt64, kFloat16, kFloat32, kFloat64})
    if (d == descr(t)) return t;
  EMBER_FAIL("[npy] unsupported descr ", d);
}

}  // namespace

void write_npy(const std::string& path, const Tensor& t) {
  // bfloat16 has no NumPy type: it travels as float32.
  Tensor c = (t.dtype() == kBFloat16 ? t.to(kFloat32) : t).cpu().contiguous();
  std::ostringstream header;
  header << "{'descr': '" << descr(c.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (int64_t d = 0; d < c.dim(); ++d)
    header << c.size(d) << (c.dim() == 1 ? "," : (d + 1 < c.dim() ? ", " : ""));
  header << "), }";
  std::string h = header.str();
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(h.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
  EMBER_CHECK(out.good(), "[npy] cannot write ", path);
}

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in.good(), "[npy] cannot open ", path);
  char magic[8];
  in.read(magic, 8);
  EMBER_CHECK(std::memcmp(magic, "\x93NUMPY", 6) == 0, "[npy] ", path, " is not a .npy file");
  uint16_t len = 0;
  in.read(reinterpret_cast<char*>(&len), 2);
  std::string h(len, ' ');
  in.read(h.data(), len);
  auto field = [&](const std::string& key) {
    size_t p = h.find("'" + key + "'");
    EMBER_CHECK(p != std::string::npos, "[npy] no ", key, " in header of ", path);
    return p + key.size() + 3;
  };
  size_t p = h.find('\'', field("descr"));
  std::string d = h.substr(p + 1, h.find('\'', p + 1) - p - 1);
  EMBER_CHECK(h.find("'fortran_order': False") != std::string::npos, "[npy] fortran order in ",
              path);
  size_t s0 = h.find('(', field("shape")), s1 = h.find(')', s0);
  Shape shape;
  std::stringstream ss(h.substr(s0 + 1, s1 - s0 - 1));
  std::string item;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(item));
  Tensor t = empty(shape, from_descr(d));
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
  EMBER_CHECK(in.good() || t.nbytes() == 0, "[npy] truncated data in ", path);
  return t;
}

}  // namespace ember::testing
