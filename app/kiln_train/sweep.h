// SPDX-License-Identifier: Apache-2.0
// kiln-train --sweep: a hyper-parameter sweep of a project (engine/api/sweep.h) with a line per
// trial as it ends, a results table and the best trial, or one line of JSON; --apply-best writes
// the project with the best trial's parameters.
#pragma once

#include <optional>
#include <string>

#include "engine/api/sweep.h"

namespace kiln::app {

struct SweepCliOptions {
    std::string specPath;
    std::string applyBestTo;        // "" : write nothing
    std::optional<int> epochs;      // --epochs: the trials' epochs unless the spec sets them
    engine::api::SweepOptions sweep;
    bool json = false;
    bool quiet = false;
};

// Runs the sweep and prints it; returns the exit status (0; 2 for a bad spec or project; 1 when
// no trial finished or the output cannot be written).
int runSweepCli(const engine::io::Project& project, const std::string& projectPath, const SweepCliOptions& options);

}  // namespace kiln::app
