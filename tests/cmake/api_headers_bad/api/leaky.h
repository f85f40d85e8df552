// SPDX-License-Identifier: Apache-2.0
// A fixture for the api_headers check: the first engine include is allowed, the second and third
// are not.
#pragma once

#include "engine/core/shape.h"
#include "engine/store/run_store.h"
#include "engine/api/internal/training_setup.h"
