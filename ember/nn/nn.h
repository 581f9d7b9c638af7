// ember::nn: modules, layers, initialisation and the functional API.
#pragma once

#include "ember/nn/attention.h"
#include "ember/nn/clip_grad.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/layers.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/modules/sequential.h"
#include "ember/nn/modules/transformer.h"
