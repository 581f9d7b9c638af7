#include "ember/nn/modules/embedding.h"

#include "ember/nn/init.h"
#include "ember/ops/indexing.h"

namespace ember::nn {

Embedding::Embedding(int64_t n, int64_t dim)
    : num_embeddings(n),
      embedding_dim(dim),
      weight(register_parameter("weight", uninitialized({n, dim}))) {
  if (should_initialize()) reset_parameters();
}
void Embedding::reset_parameters() { init::normal_(weight); }
Tensor Embedding::forward(const Tensor& indices) { return embedding(weight, indices); }
std::string Embedding::extra_repr() const {
  return std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
}
std::shared_ptr<Module> Embedding::clone_impl() const {
  return std::make_shared<Embedding>(num_embeddings, embedding_dim);
}

}  // namespace ember::nn
