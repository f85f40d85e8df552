// SPDX-License-Identifier: Apache-2.0
// A fixture for the api_headers check: api headers, the vocabulary and core basics pass.
#pragma once

#include "engine/api/run_history.h"
#include "engine/core/error.h"
#include "engine/io/project.h"
