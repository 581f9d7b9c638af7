#include "ember/models/resnet.h"

#include "ember/nn/init.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/pooling.h"

namespace ember::models {
namespace {

std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t k, int64_t stride,
                                 int64_t padding) {
  return nn::make<nn::Conv2d>(
      nn::Conv2dOptions(in, out, k).with_stride(stride).with_padding(padding).with_bias(false));
}

// The child registered as `name`, or null.
std::shared_ptr<nn::Module> child(const nn::Module& m, const std::string& name) {
  for (auto& [n, c] : m.named_children())
    if (n == name) return c;
  return nullptr;
}

// A stage of two blocks; the first changes the stride and width.
std::shared_ptr<nn::Sequential> stage(int64_t in_planes, int64_t planes, int64_t stride) {
  return nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<BasicBlock>(in_planes, planes, stride), nn::make<BasicBlock>(planes, planes, 1)});
}

}  // namespace

BasicBlock::BasicBlock(int64_t in_planes_, int64_t planes_, int64_t stride_)
    : in_planes(in_planes_), planes(planes_), stride(stride_) {
  register_module("conv1", conv(in_planes, planes, 3, stride, 1));
  register_module("bn1", nn::make<nn::BatchNorm2d>(planes));
  register_module("conv2", conv(planes, planes, 3, 1, 1));
  register_module("bn2", nn::make<nn::BatchNorm2d>(planes));
  if (stride != 1 || in_planes != planes)
    register_module("downsample",
                    nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
                        conv(in_planes, planes, 1, stride, 0), nn::make<nn::BatchNorm2d>(planes)}));
  bind_children();
}

void BasicBlock::bind_children() {
  conv1 = std::dynamic_pointer_cast<nn::Conv2d>(child(*this, "conv1"));
  conv2 = std::dynamic_pointer_cast<nn::Conv2d>(child(*this, "conv2"));
  EMBER_CHECK(conv1 && conv2, "[BasicBlock] conv1 and conv2 must be Conv2d modules");
  bn1 = child(*this, "bn1");
  bn2 = child(*this, "bn2");
  downsample = child(*this, "downsample");
}

std::shared_ptr<nn::Module> BasicBlock::replace_module(const std::string& name,
                                                       std::shared_ptr<nn::Module> module) {
  std::shared_ptr<nn::Module> old = Module::replace_module(name, std::move(module));
  bind_children();
  return old;
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = relu((*bn1)((*conv1)(x)));
  out = (*bn2)((*conv2)(out));
  return relu(out + (downsample ? (*downsample)(x) : x));
}

std::shared_ptr<nn::Module> BasicBlock::clone_impl() const {
  return std::make_shared<BasicBlock>(in_planes, planes, stride);
}

ResNet18::ResNet18(ResNet18Options o) : options(o) {
  EMBER_CHECK(o.in_channels > 0 && o.num_classes > 0,
              "[ResNet18] expected positive in_channels and num_classes, got ", o.in_channels,
              " and ", o.num_classes);
  bool small = o.stem == ResNetStem::Small;
  register_module("conv1",
                  small ? conv(o.in_channels, 64, 3, 1, 1) : conv(o.in_channels, 64, 7, 2, 3));
  register_module("bn1", nn::make<nn::BatchNorm2d>(64));
  register_module("layer1", stage(64, 64, 1));
  register_module("layer2", stage(64, 128, 2));
  register_module("layer3", stage(128, 256, 2));
  register_module("layer4", stage(256, 512, 2));
  register_module("fc", nn::make<nn::Linear>(512, o.num_classes));
  bind_children();
  if (!should_initialize()) return;
  apply([](nn::Module& m) {
    if (auto* c = dynamic_cast<nn::Conv2d*>(&m))
      nn::init::kaiming_normal_(c->weight, 0, nn::init::FanMode::FanOut,
                                nn::init::Nonlinearity::ReLU);
  });
}

void ResNet18::bind_children() {
  conv1 = std::dynamic_pointer_cast<nn::Conv2d>(child(*this, "conv1"));
  fc = std::dynamic_pointer_cast<nn::Linear>(child(*this, "fc"));
  EMBER_CHECK(conv1 && fc, "[ResNet18] conv1 must be a Conv2d and fc a Linear module");
  bn1 = child(*this, "bn1");
  layer1 = child(*this, "layer1");
  layer2 = child(*this, "layer2");
  layer3 = child(*this, "layer3");
  layer4 = child(*this, "layer4");
}

std::shared_ptr<nn::Module> ResNet18::replace_module(const std::string& name,
                                                     std::shared_ptr<nn::Module> module) {
  std::shared_ptr<nn::Module> old = Module::replace_module(name, std::move(module));
  bind_children();
  return old;
}

Tensor ResNet18::forward(const Tensor& x) {
  Tensor h = relu((*bn1)((*conv1)(x)));
  if (options.stem == ResNetStem::ImageNet) h = max_pool2d(h, {3, 3}, Pair{2, 2}, {1, 1});
  h = (*layer4)((*layer3)((*layer2)((*layer1)(h))));
  return (*fc)(adaptive_avg_pool2d(h, {1, 1}).flatten(1));
}

std::shared_ptr<nn::Module> ResNet18::clone_impl() const {
  return std::make_shared<ResNet18>(options);
}

std::shared_ptr<ResNet18> resnet18_fashion_mnist(int64_t image_size) {
  EMBER_CHECK(image_size > 0, "[resnet18_fashion_mnist] expected a positive image size, got ",
              image_size);
  return nn::make<ResNet18>(ResNet18Options().with_in_channels(1).with_num_classes(10).with_stem(
      image_size <= 32 ? ResNetStem::Small : ResNetStem::ImageNet));
}

}  // namespace ember::models
