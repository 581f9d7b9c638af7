// MNIST and Fashion-MNIST in the IDX format (gzipped or not): every header field is checked, and
// a corrupt or truncated file is a one-line error naming the file, the field and the offset.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "ember/data/dataset.h"

namespace ember::data {

/// Reads one IDX file of unsigned bytes: shape from the header, the data as a uint8 tensor.
/// `expected_dims` (if given) is the number of dimensions the caller needs.
Tensor read_idx(const std::string& path, std::optional<int> expected_dims = std::nullopt);

namespace datasets {

/// Debian's dataset-fashion-mnist installs the files here.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct MNISTOptions {
  bool train = true;
  /// Images become (x / 255 - mean) / std; Fashion-MNIST's statistics by default.
  double mean = 0.2860, std = 0.3530;
  /// When > 0, images are resized to resize x resize, bilinearly (d2l's
  /// load_data_fashion_mnist(resize=96), which ResNet's larger stem is trained on).
  int64_t resize = 0;
};

/// Images (1, 28, 28) float32 (or resized), labels int64. Reads
/// {train,t10k}-{images-idx3,labels-idx1}-ubyte with or without .gz from `root`.
class MNIST : public Dataset {
 public:
  explicit MNIST(const std::string& root, MNISTOptions options = {});
  size_t size() const override { return static_cast<size_t>(labels_.size(0)); }
  Example get(size_t index) const override;
  Example get_batch(const std::vector<size_t>& indices) const override;
  /// All images (N, 28, 28) uint8 and labels (N) int64, as read.
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }

 private:
  /// raw uint8 images (N, 28, 28) -> normalised (and resized) float32 (N, 1, H, W).
  Tensor prepare(const Tensor& raw) const;
  Tensor images_, labels_;
  MNISTOptions options_;
};

}  // namespace datasets
}  // namespace ember::data
