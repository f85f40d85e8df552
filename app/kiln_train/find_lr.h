// SPDX-License-Identifier: Apache-2.0
// kiln-train --find-lr: the learning-rate range test of a project, printed as a table and the
// suggested rate, or as one line of JSON.
#pragma once

#include "engine/api/learning_rate_finder.h"

namespace kiln::app {

// Runs the test and prints it; returns the exit status (0, or reportError's for a failure).
int runFindLr(const engine::io::Project& project, const std::string& projectPath,
              const engine::api::LrFinderRequest& request, bool json, bool quiet);

}  // namespace kiln::app
