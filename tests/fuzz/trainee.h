// The model and optimizer whose checkpoints the checkpoint fuzz target loads (and whose valid
// checkpoints seed it): a small MLP, so that a run does a million loads in minutes, after one
// step of SGD with momentum or of Adam, so that the optimizer state exists.
#pragma once

#include <memory>

#include "ember/ember.h"

namespace ember::fuzz {

struct Trainee {
  std::shared_ptr<models::MLP> model;
  std::unique_ptr<optim::Optimizer> optimizer;
};

inline Trainee make_trainee(bool adam) {
  manual_seed(0);
  Trainee t;
  t.model = nn::make<models::MLP>(std::vector<int64_t>{4, 3, 2});
  if (adam)
    t.optimizer = std::make_unique<optim::Adam>(t.model->parameters(), optim::AdamOptions(1e-3));
  else
    t.optimizer = std::make_unique<optim::SGD>(t.model->parameters(),
                                               optim::SGDOptions(0.01).with_momentum(0.9));
  nn::functional::cross_entropy(t.model->forward(randn({2, 4})), randint(0, 2, {2})).backward();
  t.optimizer->step();
  return t;
}

}  // namespace ember::fuzz
