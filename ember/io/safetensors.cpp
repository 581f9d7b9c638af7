#include "ember/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "ember/core/grad_mode.h"
#include "ember/io/atomic_file.h"
#include "ember/ops/copy.h"

namespace ember::io {
namespace {

using json = nlohmann::json;
constexpr uint64_t kMaxHeader = 100000000;  // bytes, the reference reader's limit

const char* dtype_code(DType t) {
  switch (t) {
    case kBool:
      return "BOOL";
    case kUInt8:
      return "U8";
    case kInt8:
      return "I8";
    case kInt16:
      return "I16";
    case kInt32:
      return "I32";
    case kInt64:
      return "I64";
    case kFloat16:
      return "F16";
    case kBFloat16:
      return "BF16";
    case kFloat32:
      return "F32";
    case kFloat64:
      return "F64";
    case kComplex64:
      return "C64";
    case kComplex128:
      return "C128";
  }
  return "?";
}

std::optional<DType> dtype_from_code(const std::string& s) {
  for (DType t : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32,
                  kFloat64, kComplex64, kComplex128})
    if (s == dtype_code(t)) return t;
  return std::nullopt;
}

// One tensor of a header: where its bytes are in the data section, and what they hold.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;  // bytes from the start of the data section
};

// The steps of reading a file; each rejects what it checks with an error naming the file.
struct Reader {
  const std::string& source;

  [[noreturn]] void fail(const std::string& what) const {
    EMBER_FAIL("[safetensors] ", source, ": ", what);
  }

  // The little-endian u64 that opens the file: the header's length in bytes.
  uint64_t header_length(const std::string& bytes) const {
    if (bytes.size() < 8)
      fail("file is too small (" + std::to_string(bytes.size()) + " bytes) to hold a header");
    uint64_t n;
    std::memcpy(&n, bytes.data(), 8);
    if (n > kMaxHeader)
      fail("header length " + std::to_string(n) + " exceeds the limit of " +
           std::to_string(kMaxHeader));
    if (n > bytes.size() - 8)
      fail("header length " + std::to_string(n) + " exceeds the file size minus 8 (" +
           std::to_string(bytes.size() - 8) + ")");
    return n;
  }

  // The header's JSON object; a key given twice is an error rather than the last one winning.
  json parse_header(const std::string& text) const {
    if (text.empty() || text[0] != '{') fail("header does not start with '{'");
    // nlohmann keeps the last of duplicate keys silently: count them while parsing.
    std::set<std::string> top_keys;
    std::string duplicate;
    json header;
    try {
      header = json::parse(text, [&](int depth, json::parse_event_t event, json& parsed) {
        if (depth == 1 && event == json::parse_event_t::key) {
          std::string key = parsed.get<std::string>();
          if (!top_keys.insert(key).second && duplicate.empty()) duplicate = key;
        }
        return true;
      });
    } catch (const json::exception& e) {
      fail(std::string("header is not valid JSON: ") + e.what());
    }
    if (!duplicate.empty()) fail("duplicate key '" + duplicate + "' in header");
    if (!header.is_object()) fail("header is not a JSON object");
    return header;
  }

  Metadata metadata(const json& info) const {
    if (!info.is_object()) fail("__metadata__ must be an object of strings");
    Metadata out;
    for (auto& [k, v] : info.items()) {
      if (!v.is_string()) fail("__metadata__ value for '" + k + "' is not a string");
      out[k] = v.get<std::string>();
    }
    return out;
  }

  // A tensor's shape; `numel` receives its element count (checked not to overflow).
  Shape sizes(const std::string& name, const json& dims, uint64_t* numel) const {
    if (!dims.is_array()) fail("tensor '" + name + "': shape is not an array");
    Shape out;
    *numel = 1;
    for (auto& d : dims) {
      if (!d.is_number_unsigned())
        fail("tensor '" + name + "': shape entries must be non-negative integers");
      uint64_t v = d.get<uint64_t>();
      if (v > (uint64_t{1} << 62) || __builtin_mul_overflow(*numel, v, numel))
        fail("tensor '" + name + "': shape overflows");
      out.push_back(static_cast<int64_t>(v));
    }
    return out;
  }

  // One tensor's entry, its byte span checked against its dtype and shape.
  Entry entry(const std::string& name, const json& info) const {
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
        !info.contains("data_offsets"))
      fail("tensor '" + name + "' needs dtype, shape and data_offsets");
    if (!info["dtype"].is_string()) fail("tensor '" + name + "': dtype is not a string");
    std::optional<DType> dt = dtype_from_code(info["dtype"].get<std::string>());
    if (!dt)
      fail("tensor '" + name + "' has unsupported dtype " + info["dtype"].get<std::string>());
    uint64_t numel;
    Shape shape = sizes(name, info["shape"], &numel);
    auto& off = info["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      fail("tensor '" + name + "': data_offsets must be two non-negative integers");
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end) fail("tensor '" + name + "': data_offsets begin > end");
    uint64_t nbytes;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(itemsize(*dt)), &nbytes))
      fail("tensor '" + name + "': size overflows");
    if (end - begin != nbytes)
      fail("tensor '" + name + "': data_offsets span " + std::to_string(end - begin) +
           " bytes but dtype and shape need " + std::to_string(nbytes));
    return {name, *dt, std::move(shape), begin, end};
  }

  // The data must be covered exactly once, without holes, to the end of the file. `entries` are
  // in data order.
  void check_coverage(const std::vector<Entry>& entries, uint64_t data_size) const {
    uint64_t expect = 0;
    for (const Entry& e : entries) {
      if (e.begin != expect)
        fail("tensor '" + e.name + "' starts at " + std::to_string(e.begin) +
             " but the previous data ends at " + std::to_string(expect) +
             " (offsets must be contiguous, without overlap or holes)");
      expect = e.end;
    }
    if (expect != data_size)
      fail("the data ends at " + std::to_string(expect) + " but the file holds " +
           std::to_string(data_size) + " bytes of data");
  }
};

}  // namespace

std::string to_safetensors(const nn::NamedTensors& tensors, const Metadata& metadata) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");
  std::set<std::string> names;
  for (auto& [name, t] : tensors) {
    EMBER_CHECK(t.defined(), "[safetensors] tensor '", name, "' is undefined");
    EMBER_CHECK(name != "__metadata__", "[safetensors] '__metadata__' is reserved");
    EMBER_CHECK(names.insert(name).second, "[safetensors] duplicate tensor name '", name, "'");
  }
  // Descending alignment, then name: every tensor starts aligned to its element size.
  std::vector<const std::pair<std::string, Tensor>*> order;
  for (auto& entry : tensors) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
    if (a->second.element_size() != b->second.element_size())
      return a->second.element_size() > b->second.element_size();
    return a->first < b->first;
  });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> data;
  uint64_t offset = 0;
  NoGradGuard no_grad;
  for (auto* entry : order) {
    Tensor c = entry->second.to(Device(kCPU, 0)).contiguous();
    uint64_t n = c.nbytes();
    header[entry->first] = {{"dtype", dtype_code(c.dtype())},
                            {"shape", c.sizes().vec()},
                            {"data_offsets", {offset, offset + n}}};
    offset += n;
    data.push_back(c);
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + h.size() + offset);
  uint64_t len = h.size();
  out.append(reinterpret_cast<const char*>(&len), 8);
  out += h;
  for (const Tensor& c : data) out.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  return out;
}

SafetensorsFile from_safetensors(const std::string& bytes, Device device,
                                 const std::string& source) {
  Reader reader{source};
  uint64_t n = reader.header_length(bytes);
  json header = reader.parse_header(bytes.substr(8, n));
  SafetensorsFile out;
  std::vector<Entry> entries;
  for (auto& [name, info] : header.items()) {
    if (name == "__metadata__")
      out.metadata = reader.metadata(info);
    else
      entries.push_back(reader.entry(name, info));
  }
  // Data order; an empty tensor sorts before a tensor at the same offset.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  reader.check_coverage(entries, bytes.size() - 8 - n);
  const char* base = bytes.data() + 8 + n;
  NoGradGuard no_grad;
  for (const Entry& e : entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (t.nbytes()) std::memcpy(t.data_ptr(), base + e.begin, t.nbytes());
    out.tensors.emplace_back(e.name, device.is_cpu() && device.index() <= 0 ? t : t.to(device));
  }
  return out;
}

void save_safetensors(const std::string& path, const nn::NamedTensors& tensors,
                      const Metadata& metadata) {
  std::string bytes = to_safetensors(tensors, metadata);
  write_atomically(path, [&](std::ostream& os) {
    os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

SafetensorsFile load_safetensors(const std::string& path, Device device) {
  remove_stray_temporaries(path);  // Note [Temporary files of a killed writer]
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in.good(), "[safetensors] cannot open ", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return from_safetensors(ss.str(), device, path);
}

void save(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  save_safetensors(path, module.state_dict(), metadata);
}

void load(nn::Module& module, const std::string& path, bool strict) {
  SafetensorsFile f = load_safetensors(path);
  module.load_state_dict(f.tensors, strict);
}

}  // namespace ember::io
