// SPDX-License-Identifier: Apache-2.0
// One export as kiln-export and the studio's export dialog run it: project + weights → the
// model repository, with the parity check on a held-out batch. No Qt; safe off the GUI thread.
#pragma once

#include <atomic>
#include <string>

#include "engine/io/model_repository.h"

namespace kiln::app {

struct ExportJobRequest {
    std::string project;   // *.kiln
    std::string weights;   // weights.safetensors of a run
    std::string base;      // repository root
    std::string name;      // model name (default: the project's name)
    int64_t version = 0;   // 0: next free
    std::string formats = "onnx,savedmodel,kiln";
    int threads = 0;       // 0: all cores
    int64_t parityBatch = 32;
    std::string kilnVersion;
};

struct ExportJobResult {
    engine::io::RepositoryResult repo;
    std::string name;
    std::string paritySource;  // "validation", "test", "train" or "synthetic"
    std::string parityNote;    // why synthetic inputs were used, if they were
};

// Runs the export; `progress` is called from the calling thread.
engine::Result<ExportJobResult> runExportJob(const ExportJobRequest& request,
                                             const engine::io::ProgressFn& progress = {});

}  // namespace kiln::app
