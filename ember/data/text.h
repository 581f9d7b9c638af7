// Character-level text for language models, as nanoGPT's shakespeare_char prepares it: the
// vocabulary is the file's distinct bytes in sorted order, the first 90% trains and the rest
// validates, and a batch is random windows of block_size tokens with their next tokens.
#pragma once

#include <string>
#include <utility>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember::data::datasets {

class CharText {
 public:
  /// Reads `path` (a missing, unreadable or empty file is an error naming it).
  explicit CharText(const std::string& path, double train_fraction = 0.9);
  /// From the text itself.
  static CharText from_string(std::string text, double train_fraction = 0.9);
  /// Only the vocabulary (distinct bytes in sorted order, as vocab() gives it): for encoding
  /// and decoding with a trained model; the splits are empty.
  static CharText from_vocabulary(const std::string& vocab);

  /// The distinct bytes in sorted order: token i is vocab()[i].
  const std::string& vocab() const { return vocab_; }
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  /// Token ids (int64) of `text`; a byte outside the vocabulary is an error naming it.
  Tensor encode(const std::string& text) const;
  std::string decode(const Tensor& tokens) const;
  /// The tokens of the split (int64, 1-d).
  const Tensor& train() const { return train_; }
  const Tensor& val() const { return val_; }

  /// (x, y): batch_size windows (batch_size, block_size) at random offsets of the split, y the
  /// same windows one token later. The split must be longer than block_size.
  std::pair<Tensor, Tensor> batch(bool train, int64_t batch_size, int64_t block_size,
                                  Generator* gen = nullptr) const;

 private:
  CharText() = default;
  void build(const std::string& text, double train_fraction, const std::string& source);
  void set_vocabulary(std::string vocab);
  std::string vocab_;
  int16_t index_[256];  // byte -> token id, -1 for bytes not in the text
  Tensor train_, val_;
};

/// The Tiny Shakespeare text the repository ships (data/tinyshakespeare/input.txt), where the
/// build or the installation put it; empty when neither has it.
std::string tiny_shakespeare_path();

}  // namespace ember::data::datasets
