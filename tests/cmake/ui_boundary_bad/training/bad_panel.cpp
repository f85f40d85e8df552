// SPDX-License-Identifier: Apache-2.0
// A fixture for the boundary check: line 6 reaches into the trainer, which ui/ may not do.
#include "engine/api/training_job.h"
#include "engine/io/project.h"

#include "engine/train/trainer.h"
