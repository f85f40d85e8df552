// SPDX-License-Identifier: Apache-2.0
// A fixture for the boundary check: lines 7 and 8 reach into the trainer and the api's own set-up,
// which ui/ may not do.
#include "engine/api/training_job.h"
#include "engine/io/project.h"

#include "engine/train/trainer.h"
#include "engine/api/internal/training_setup.h"
