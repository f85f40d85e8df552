// SPDX-License-Identifier: Apache-2.0
// A fixture for the boundary check: the api and the vocabulary only, which the studio may include.
#include "engine/api/plugins.h"
#include "engine/ops/op_table.h"
