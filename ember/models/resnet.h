// ResNet-18 with torchvision's module names (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0,
// fc, ...), so that its state dict loads into torchvision.models.resnet18 and back. Two stems:
// torchvision's (7x7 convolution, stride 2, max-pool: d2l's ResNet on 96x96 Fashion-MNIST, and
// ImageNet), and d2l's multi-GPU chapter's for small images (3x3 convolution, stride 1, no pool).
#pragma once

#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/layers.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/sequential.h"

namespace ember::models {

/// torchvision's BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), 3x3 convolutions
/// without bias; the shortcut is `downsample` (1x1 convolution with the block's stride, then batch
/// norm) when the shape changes, else the identity.
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in_planes, int64_t planes, int64_t stride = 1);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "BasicBlock"; }
  std::shared_ptr<nn::Module> replace_module(const std::string& name,
                                             std::shared_ptr<nn::Module> module) override;

  const int64_t in_planes, planes, stride;
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  // BatchNorm2d, or what replaced it (distributed::SyncBatchNorm).
  std::shared_ptr<nn::Module> bn1, bn2;
  std::shared_ptr<nn::Module> downsample;  // null for the identity shortcut

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  void bind_children();
};

enum class ResNetStem {
  ImageNet,  // conv 7x7 stride 2 padding 3, batch norm, ReLU, max-pool 3x3 stride 2 padding 1
  Small,     // conv 3x3 stride 1 padding 1, batch norm, ReLU (d2l's "slightly modified" ResNet-18)
};

struct ResNet18Options {
  int64_t in_channels = 3;
  int64_t num_classes = 1000;
  ResNetStem stem = ResNetStem::ImageNet;
  ResNet18Options& with_in_channels(int64_t c) {
    in_channels = c;
    return *this;
  }
  ResNet18Options& with_num_classes(int64_t n) {
    num_classes = n;
    return *this;
  }
  ResNet18Options& with_stem(ResNetStem s) {
    stem = s;
    return *this;
  }
};

/// ResNet-18: stem, four stages of two BasicBlocks (64, 128, 256, 512 channels; stride 2 from the
/// second), global average pooling, a linear layer. Initialised as torchvision does (convolutions
/// kaiming_normal_ fan_out; batch norm weight 1, bias 0; the linear layer PyTorch's default).
class ResNet18 : public nn::Module {
 public:
  explicit ResNet18(ResNet18Options options = {});
  Tensor forward(const Tensor& x) override;  // x (N, in_channels, H, W) -> logits (N, classes)
  std::string name() const override { return "ResNet"; }
  std::shared_ptr<nn::Module> replace_module(const std::string& name,
                                             std::shared_ptr<nn::Module> module) override;

  const ResNet18Options options;
  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::Module> bn1;
  std::shared_ptr<nn::Module> layer1, layer2, layer3, layer4;
  std::shared_ptr<nn::Linear> fc;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  void bind_children();
};

/// d2l's ResNet-18 for Fashion-MNIST (1 channel, 10 classes): the small stem for 28x28 images,
/// torchvision's for larger ones (d2l trains it on images resized to 96x96).
std::shared_ptr<ResNet18> resnet18_fashion_mnist(int64_t image_size = 28);

}  // namespace ember::models
