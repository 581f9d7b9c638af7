#include "ember/data/text.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ember/core/error.h"
#include "ember/ops/factory.h"

namespace ember::data::datasets {

CharText::CharText(const std::string& path, double train_fraction) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in, "[CharText] cannot read '", path, "': ", std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  build(text, train_fraction, path);
}

CharText CharText::from_string(std::string text, double train_fraction) {
  CharText t;
  t.build(text, train_fraction, "<text>");
  return t;
}

void CharText::build(const std::string& text, double train_fraction, const std::string& source) {
  EMBER_CHECK_VALUE(train_fraction > 0 && train_fraction < 1,
                    "[CharText] train_fraction must be in (0, 1), got ", train_fraction);
  EMBER_CHECK_VALUE(text.size() >= 2, "[CharText] '", source, "' holds ", text.size(),
                    " bytes; a language model needs text");
  bool seen[256] = {};
  for (unsigned char c : text) seen[c] = true;
  std::string vocab;
  for (int c = 0; c < 256; ++c)
    if (seen[c]) vocab.push_back(static_cast<char>(c));
  set_vocabulary(std::move(vocab));
  Tensor all = encode(text);
  auto n = static_cast<int64_t>(static_cast<double>(text.size()) * train_fraction);
  train_ = all.narrow(0, 0, n);
  val_ = all.narrow(0, n, all.size(0) - n);
}

CharText CharText::from_vocabulary(const std::string& vocab) {
  EMBER_CHECK_VALUE(!vocab.empty(), "[CharText] empty vocabulary");
  for (size_t i = 1; i < vocab.size(); ++i)
    EMBER_CHECK_VALUE(static_cast<unsigned char>(vocab[i - 1]) <
                          static_cast<unsigned char>(vocab[i]),
                      "[CharText] a vocabulary is distinct bytes in increasing order; byte ", i,
                      " breaks it");
  CharText t;
  t.set_vocabulary(vocab);
  t.train_ = t.val_ = empty({0}, kInt64);
  return t;
}

void CharText::set_vocabulary(std::string vocab) {
  vocab_ = std::move(vocab);
  std::fill(std::begin(index_), std::end(index_), int16_t{-1});
  for (size_t i = 0; i < vocab_.size(); ++i)
    index_[static_cast<unsigned char>(vocab_[i])] = static_cast<int16_t>(i);
}

Tensor CharText::encode(const std::string& text) const {
  Tensor out = empty({static_cast<int64_t>(text.size())}, kInt64);
  int64_t* p = out.data_ptr<int64_t>();
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    EMBER_CHECK_VALUE(index_[c] >= 0, "[CharText] the byte ", static_cast<int>(c), " ('",
                      std::string(1, text[i]), "') at position ", i,
                      " is not in the vocabulary of ", vocab_.size(), " characters");
    p[i] = index_[c];
  }
  return out;
}

std::string CharText::decode(const Tensor& tokens) const {
  Tensor t = tokens.to(Device(kCPU)).to(kInt64).contiguous().reshape({-1});
  const int64_t* p = t.data_ptr<int64_t>();
  std::string out;
  out.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    EMBER_CHECK_VALUE(p[i] >= 0 && p[i] < vocab_size(), "[CharText] token ", p[i],
                      " is outside the vocabulary of ", vocab_size());
    out.push_back(vocab_[static_cast<size_t>(p[i])]);
  }
  return out;
}

std::pair<Tensor, Tensor> CharText::batch(bool train, int64_t batch_size, int64_t block_size,
                                          Generator* gen) const {
  const Tensor& data = train ? train_ : val_;
  const int64_t n = data.size(0);
  EMBER_CHECK_VALUE(batch_size > 0 && block_size > 0,
                    "[CharText] expected a positive batch size and block size, got ", batch_size,
                    " and ", block_size);
  EMBER_CHECK_VALUE(n > block_size, "[CharText] the ", train ? "training" : "validation",
                    " split has ", n, " tokens, fewer than a block of ", block_size, " + 1");
  Tensor offsets = randint(0, n - block_size, {batch_size}, kInt64, gen);
  Tensor x = empty({batch_size, block_size}, kInt64), y = empty({batch_size, block_size}, kInt64);
  const int64_t* src = data.data_ptr<int64_t>();
  const int64_t* off = offsets.data_ptr<int64_t>();
  int64_t *px = x.data_ptr<int64_t>(), *py = y.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch_size; ++b) {
    std::copy_n(src + off[b], block_size, px + b * block_size);
    std::copy_n(src + off[b] + 1, block_size, py + b * block_size);
  }
  return {x, y};
}

std::string tiny_shakespeare_path() {
  const char* env = std::getenv("EMBER_DATA_DIR");
  for (std::string dir : {std::string(env ? env : ""), std::string(EMBER_SOURCE_DATA_DIR),
                          std::string(EMBER_INSTALL_DATA_DIR)}) {
    if (dir.empty()) continue;
    std::filesystem::path p = std::filesystem::path(dir) / "tinyshakespeare" / "input.txt";
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

}  // namespace ember::data::datasets
