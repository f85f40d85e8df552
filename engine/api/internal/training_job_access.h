// SPDX-License-Identifier: Apache-2.0
// What a TrainingJob keeps inside the engine, for the engine's own code and programs (sweeps,
// kiln-train): its trainer, the trainer's configuration and the trainer's result. Internal: an
// engine/api header and the studio may not include it (cmake/CheckApiHeaders.cmake,
// cmake/CheckUiBoundary.cmake); the studio sees the api's own types in engine/api/training_job.h.
#pragma once

#include "engine/api/training_job.h"
#include "engine/train/trainer.h"

namespace kiln::engine::api {

class TrainingJobAccess {
public:
    static train::Trainer& trainer(TrainingJob& job);
    static const train::TrainingConfig& config(const TrainingJob& job);
    // The trainer's result once run() succeeded (the confusion matrix as a text table, ...);
    // null before.
    static const train::FitResult* fitResult(const TrainingJob& job);
};

}  // namespace kiln::engine::api
