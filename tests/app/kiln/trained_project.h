// SPDX-License-Identifier: Apache-2.0
// A project saved from its JSON and trained once, for the studio tests that need a real run in a
// project's history (Train charts it, Evaluate, Deploy and Explain with run take it).
#pragma once

#include <QString>

#include <string>

#include <nlohmann/json.hpp>

#include "engine/api/training_job.h"
#include "engine/io/project.h"

namespace kiln::test {

// Saves `projectJson` at `path` and trains it into a run named "first". Returns "" when done,
// else what went wrong.
inline QString saveAndTrain(const nlohmann::json& projectJson, const QString& path) {
    auto project = engine::io::parseProject(projectJson.dump(), path.toStdString());
    if (!project.ok()) return QString::fromStdString(project.error().message);
    if (auto saved = engine::io::saveProject(*project, path.toStdString()); !saved.ok())
        return QString::fromStdString(saved.error().message);
    engine::api::TrainingOptions options;
    options.runName = "first";
    auto job = engine::api::TrainingJob::prepare(*project, path.toStdString(), options);
    if (!job.ok()) return QString::fromStdString(job.error().message);
    auto outcome = (*job)->run({});
    if (!outcome.ok()) return QString::fromStdString(outcome.error().message);
    return {};
}

}  // namespace kiln::test
