#include "ember/data/mnist.h"

#include <zlib.h>

#include <filesystem>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/interpolate.h"
#include "ember/ops/reduce.h"

namespace ember::data {
namespace {

// gzFile that closes itself; zlib reads plain files through the same calls.
struct GzFile {
  explicit GzFile(const std::string& path) : f(gzopen(path.c_str(), "rb")) {}
  ~GzFile() {
    if (f) gzclose(f);
  }
  gzFile f;
};

// zlib's error for the stream, or nullptr: a truncated .gz reads as a clean end of file and a bad
// CRC shows only at the end, so only gzerror tells them apart.
const char* gz_failure(const GzFile& gz) {
  int code = Z_OK;
  const char* msg = gzerror(gz.f, &code);
  return code != Z_OK && code != Z_STREAM_END && msg ? msg : nullptr;
}

// Reads exactly n bytes at `offset` or fails naming the field.
void read_exact(GzFile& gz, const std::string& path, void* dst, size_t n, size_t offset,
                const char* field) {
  size_t got = 0;
  while (got < n) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    int r = gzread(gz.f, static_cast<char*>(dst) + got, chunk);
    if (r <= 0) {
      const char* failure = gz_failure(gz);
      std::string why = failure ? failure : "unexpected end of file";
      EMBER_FAIL("[idx] ", path, ": ", field, " at offset ", offset + got, ": expected ", n,
                 " bytes, got ", got, " (", why, ")");
    }
    got += static_cast<size_t>(r);
  }
}

// Deflate expands at most 1032:1 (RFC 1951: a 258-byte match in a code of at least 2 bits), so a
// header that asks for more than that many times the file's size cannot be honest.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Rejects a header whose sizes the file cannot hold, before memory is allocated for them: a plain
// file must have the bytes; a gzipped one must be big enough to inflate to them.
void check_plausible_size(GzFile& gz, const std::string& path, uint64_t implied_bytes) {
  std::error_code ec;
  uint64_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) return;  // not a regular file (a pipe): the reads themselves will tell
  bool plain = gzdirect(gz.f) == 1;
  uint64_t limit = plain ? file_bytes : file_bytes * kMaxDeflateRatio;
  EMBER_CHECK(implied_bytes <= limit, "[idx] ", path, ": the header implies ", implied_bytes,
              " bytes, but the ", plain ? "" : "gzipped ", "file has only ", file_bytes,
              plain ? " bytes" : " bytes, which cannot inflate to that much",
              " (truncated or corrupt)");
}

uint32_t big_endian(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

std::string find_file(const std::string& root, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    std::filesystem::path p = std::filesystem::path(root) / name;
    if (std::filesystem::exists(p)) return p.string();
  }
  EMBER_FAIL("[MNIST] neither ", stem, ".gz nor ", stem, " found in ", root,
             " (Fashion-MNIST is installed by Debian's dataset-fashion-mnist into ",
             datasets::kFashionMnistDir, ")");
}

}  // namespace

Tensor read_idx(const std::string& path, std::optional<int> expected_dims) {
  GzFile gz(path);
  EMBER_CHECK(gz.f != nullptr, "[idx] cannot open ", path);
  unsigned char magic[4];
  read_exact(gz, path, magic, 4, 0, "magic number");
  EMBER_CHECK(magic[0] == 0 && magic[1] == 0, "[idx] ", path,
              ": magic number at offset 0: expected two zero bytes, got ", int(magic[0]), " ",
              int(magic[1]), " (not an IDX file)");
  EMBER_CHECK(magic[2] == 0x08, "[idx] ", path,
              ": data type at offset 2: expected 0x08 (unsigned byte), got 0x", std::hex,
              int(magic[2]));
  int ndim = magic[3];
  EMBER_CHECK(ndim >= 1 && ndim <= 4, "[idx] ", path,
              ": number of dimensions at offset 3: expected 1 to 4, got ", ndim);
  if (expected_dims)
    EMBER_CHECK(ndim == *expected_dims, "[idx] ", path,
                ": number of dimensions at offset 3: expected ", *expected_dims, ", got ", ndim);
  Shape shape;
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) {
    unsigned char b[4];
    size_t offset = 4 + 4 * static_cast<size_t>(d);
    read_exact(gz, path, b, 4, offset, "dimension size");
    int64_t n = big_endian(b);
    // Bounding each dimension and the total keeps a hostile header from asking for terabytes.
    EMBER_CHECK(n > 0 && n <= (int64_t{1} << 28), "[idx] ", path, ": dimension ", d, " at offset ",
                offset, ": expected 1 to 2^28, got ", n);
    total *= n;
    EMBER_CHECK(total <= (int64_t{1} << 32), "[idx] ", path, ": the header implies ", total,
                "+ bytes of data, more than the 4 GiB limit");
    shape.push_back(n);
  }
  check_plausible_size(gz, path,
                       static_cast<uint64_t>(total) + 4 + 4 * static_cast<uint64_t>(ndim));
  Tensor t = empty(shape, kUInt8);
  // Decompress what the header implies, then one byte more: the file must end there (a
  // mismatched header is an error, not a silent truncation), and reaching the end of a .gz makes
  // zlib check its CRC. A gzip bomb costs no more than the header's size.
  size_t data_offset = 4 + 4 * static_cast<size_t>(ndim);
  read_exact(gz, path, t.data_ptr(), static_cast<size_t>(total), data_offset, "data");
  char extra;
  int r = gzread(gz.f, &extra, 1);
  const char* failure = gz_failure(gz);
  EMBER_CHECK(r == 0 && !failure, "[idx] ", path, ": end of data at offset ",
              data_offset + static_cast<size_t>(total), ": ",
              r > 0 ? "expected the end of the file as the header's sizes imply, got more data"
                    : (failure ? failure : "read error"));
  return t;
}

namespace datasets {

MNIST::MNIST(const std::string& root, MNISTOptions options) : options_(options) {
  EMBER_CHECK(options.std > 0, "[MNIST] std must be positive, got ", options.std);
  std::string prefix = options.train ? "train" : "t10k";
  std::string images_path = find_file(root, prefix + "-images-idx3-ubyte");
  std::string labels_path = find_file(root, prefix + "-labels-idx1-ubyte");
  images_ = read_idx(images_path, 3);
  Tensor labels = read_idx(labels_path, 1);
  EMBER_CHECK(images_.size(0) == labels.size(0), "[MNIST] ", images_path, " has ", images_.size(0),
              " images but ", labels_path, " has ", labels.size(0), " labels");
  NoGradGuard no_grad;
  int64_t max_label = labels.numel() ? labels.max().item<int64_t>() : 0;
  EMBER_CHECK(max_label <= 9, "[MNIST] ", labels_path, ": labels must be 0 to 9, found ",
              max_label);
  labels_ = labels.to(kInt64);
}

Tensor MNIST::prepare(const Tensor& raw) const {
  // (x / 255 - mean) / std as one multiply-add
  double scale = 1.0 / (255.0 * options_.std), shift = -options_.mean / options_.std;
  Tensor x = (raw.to(kFloat32) * scale + shift).unsqueeze(1);
  // Resizing after normalising gives the same images: bilinear weights sum to 1.
  if (options_.resize > 0)
    x = interpolate(x, {options_.resize, options_.resize}, "bilinear");
  return x;
}

Example MNIST::get(size_t index) const {
  EMBER_CHECK_INDEX(index < size(), "[MNIST] index ", index, " out of range for ", size(), " samples");
  auto i = static_cast<int64_t>(index);
  NoGradGuard no_grad;
  return {prepare(images_[i].unsqueeze(0)).squeeze(0), labels_[i]};
}

Example MNIST::get_batch(const std::vector<size_t>& indices) const {
  std::vector<int64_t> idx(indices.begin(), indices.end());
  Tensor index = from_vector(idx, {static_cast<int64_t>(idx.size())});
  NoGradGuard no_grad;
  return {prepare(index_select(images_, 0, index)), index_select(labels_, 0, index)};
}

}  // namespace datasets
}  // namespace ember::data
