// nn::Embedding: a table of vectors looked up by integer index.
#pragma once

#include "ember/nn/module.h"

namespace ember::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor& indices) override;
  std::string name() const override { return "Embedding"; }
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t num_embeddings, embedding_dim;
  Tensor& weight;  // (num_embeddings, embedding_dim), initialised N(0, 1)

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

}  // namespace ember::nn
