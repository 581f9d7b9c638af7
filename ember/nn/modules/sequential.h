// nn::Sequential: children named "0", "1", ... applied in order.
#pragma once

#include <initializer_list>

#include "ember/nn/module.h"

namespace ember::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  /// Named children, for models whose state dict keys must match another's ("conv1", "fc1", ...).
  explicit Sequential(std::vector<std::pair<std::string, std::shared_ptr<Module>>> named);

  Sequential& push_back(std::shared_ptr<Module> m);
  Sequential& push_back(const std::string& name, std::shared_ptr<Module> m);
  std::shared_ptr<Module> operator[](size_t i) const;
  size_t size() const { return modules_.size(); }

  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Sequential"; }
  std::shared_ptr<Module> replace_module(const std::string& name,
                                         std::shared_ptr<Module> module) override;

 protected:
  std::shared_ptr<Module> clone_impl() const override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace ember::nn
