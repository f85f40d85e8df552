// SPDX-License-Identifier: Apache-2.0
// A fixture for the boundary check: a headless program may use the engine directly; not judged.
#include "engine/train/trainer.h"
