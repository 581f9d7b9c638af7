// ember::io: safetensors and checkpoints.
#pragma once

#include "ember/io/atomic_file.h"
#include "ember/io/checkpoint.h"
#include "ember/io/safetensors.h"
