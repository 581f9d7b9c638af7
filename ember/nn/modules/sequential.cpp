#include "ember/nn/modules/sequential.h"

namespace ember::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (auto& m : modules) push_back(m);
}

Sequential::Sequential(std::vector<std::pair<std::string, std::shared_ptr<Module>>> named) {
  for (auto& [n, m] : named) push_back(n, m);
}

Sequential& Sequential::push_back(std::shared_ptr<Module> m) {
  return push_back(std::to_string(modules_.size()), std::move(m));
}

Sequential& Sequential::push_back(const std::string& name, std::shared_ptr<Module> m) {
  add_child(name, m);
  modules_.push_back(std::move(m));
  return *this;
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  EMBER_CHECK_INDEX(i < modules_.size(), "[Sequential] index ", i, " is out of range for ",
              modules_.size(), " modules");
  return modules_[i];
}

std::shared_ptr<Module> Sequential::replace_module(const std::string& name,
                                                   std::shared_ptr<Module> module) {
  std::shared_ptr<Module> old = Module::replace_module(name, module);
  // Children and modules_ were appended together: the child's position is its index.
  auto named = named_children();
  for (size_t i = 0; i < named.size(); ++i)
    if (named[i].first == name) modules_[i] = module;
  return old;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& m : modules_) y = (*m)(y);
  return y;
}

std::shared_ptr<Module> Sequential::clone_impl() const {
  auto copy = std::make_shared<Sequential>();
  for (auto& [n, c] : named_children()) copy->push_back(n, c->clone_structure());
  return copy;
}

}  // namespace ember::nn
