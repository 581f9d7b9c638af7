// ember::optim: optimizers and learning-rate schedules.
#pragma once

#include "ember/optim/adam.h"
#include "ember/optim/adam_variants.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sgd.h"
