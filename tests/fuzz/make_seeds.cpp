// Writes the seed corpora of the fuzz targets from ember's own valid files: a model's safetensors,
// checkpoints after a step of SGD and of Adam (trainee.h), IDX files plain and gzipped, device
// strings and `ember train` command lines.  Usage: ember_fuzz_seeds DIR
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "ember/ember.h"
#include "tests/fuzz/trainee.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string idx(const std::vector<uint32_t>& dims) {
  std::string s = {0, 0, 0x08, static_cast<char>(dims.size())};
  size_t n = 1;
  for (uint32_t d : dims) {
    n *= d;
    for (int shift : {24, 16, 8, 0}) s += static_cast<char>((d >> shift) & 0xFF);
  }
  for (size_t i = 0; i < n; ++i) s += static_cast<char>(i * 7 % 256);
  return s;
}

std::string gzip(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string args(std::initializer_list<const char*> words) {
  std::string s;
  for (const char* w : words) {
    if (!s.empty()) s += '\0';
    s += w;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ember_fuzz_seeds DIR\n";
    return 2;
  }
  fs::path root = argv[1];
  manual_seed(0);

  // safetensors: a LeNet's state dict, a file with metadata and every dtype, an empty file.
  auto model = nn::make<models::LeNet>();
  put(root / "safetensors", "lenet", io::to_safetensors(model->state_dict(), {{"epoch", "3"}}));
  nn::NamedTensors mixed;
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool})
    mixed.emplace_back(std::string("t_") + dtype_name(t), ones({2, 3}, t));
  mixed.emplace_back("scalar", full({}, 2.5));
  mixed.emplace_back("empty", zeros({0, 4}));
  put(root / "safetensors", "mixed", io::to_safetensors(mixed, {{"a", "b"}}));
  put(root / "safetensors", "none", io::to_safetensors({}));

  // Checkpoints: the first byte picks the optimizer (0 SGD with momentum, 1 Adam).
  fs::path tmp = fs::temp_directory_path() / ("ember_fuzz_seeds_" + std::to_string(getpid()));
  fs::create_directories(tmp);
  for (int adam = 0; adam < 2; ++adam) {
    fuzz::Trainee t = fuzz::make_trainee(adam);
    fs::path p = tmp / "ckpt.safetensors";
    io::save_checkpoint(p.string(), *t.model, *t.optimizer, {{"epoch", "1"}});
    put(root / "checkpoint", adam ? "adam" : "sgd", std::string(1, char(adam)) + slurp(p));
  }
  fs::remove_all(tmp);

  // IDX: labels, images, 2-d and 4-d, plain and gzipped (the gz target compresses by itself).
  for (auto& [name, dims] : std::vector<std::pair<std::string, std::vector<uint32_t>>>{
           {"labels", {10}}, {"images", {3, 28, 28}}, {"matrix", {4, 5}}, {"4d", {2, 1, 3, 3}}}) {
    put(root / "idx", name, idx(dims));
    put(root / "idx", name + ".gz", gzip(idx(dims)));
    put(root / "idx_gz", name, idx(dims));
  }

  // Device strings, valid and not.
  int i = 0;
  for (const char* s : {"cpu", "cuda", "cuda:0", "cuda:12", "cpu:3", "cuda:01", "CUDA", "cuda:"})
    put(root / "device", "d" + std::to_string(i++), s);

  // `ember train` command lines.
  put(root / "args", "defaults", "");
  put(root / "args", "full",
      args({"--model",    "mlp",    "--epochs", "2",  "--batch-size", "128", "--lr",      "0.05",
            "--momentum", "0.5",    "--seed",   "7",  "--threads",    "2",   "--workers", "0",
            "--out",      "/tmp/x", "--device", "cpu"}));
  put(root / "args", "devices", args({"--devices", "cpu:0,cpu:1", "--epochs=3"}));
  put(root / "args", "help", args({"--help"}));
  put(root / "args", "bad", args({"--epochs", "99999999999999999999", "--lr", "nan"}));
  std::cout << "seeds written to " << root << "\n";
  return 0;
}
