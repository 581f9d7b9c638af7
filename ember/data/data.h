// ember::data: datasets and the DataLoader.
#pragma once

#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/mnist.h"
#include "ember/data/text.h"
