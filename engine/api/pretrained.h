// SPDX-License-Identifier: Apache-2.0
// Transfer learning as the studio offers it: the backbone catalogue and its availability on this
// machine, a new project from a pretrained backbone, the weights and preprocessing such a project
// expects, and replacing a model's head. The calls and types are engine/io's; front ends reach
// them through this header.
#pragma once

#include "engine/io/head_replacement.h"
#include "engine/io/model_zoo.h"
