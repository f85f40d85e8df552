// SPDX-License-Identifier: Apache-2.0
// One model import as kiln-import and the studio's File > Import Model run it: an ONNX or Keras file
// becomes an editable Kiln project (laid out for the editor), its weights and an import report.
// Qt Core only (for the layout); safe off the GUI thread.
#pragma once

#include <QString>

#include <string>

#include <nlohmann/json.hpp>

#include "engine/io/onnx_import.h"

namespace kiln::app {

struct ImportJobRequest {
    std::string model;       // *.onnx, *.keras or *.h5 (told apart by content, then extension)
    std::string project;     // the *.kiln to write
    std::string weightsOut;  // default: the project path with .safetensors
    std::string reportOut;   // empty: no report file (the report is still returned)
    // Transfer learning: cut the imported network after this node (a Kiln node name, or the ONNX
    // node / Keras layer it came from) and attach a new head of `classes` classes; "" : keep it.
    std::string replaceHeadAfter;
    int64_t classes = 0;
    double dropout = 0.2;
};

struct ImportJobResult {
    engine::io::ImportedModel model;
    std::string projectPath;
    std::string weightsPath;
    std::string reportPath;
    nlohmann::json report;      // the import report (see docs/transfer.md)
    int64_t parameterCount = 0; // values in the weights file
    std::vector<std::string> headRemoved, headAdded;  // with replaceHeadAfter: the nodes cut off and the new head
};

// Reads the model and writes the project, the weights and (when asked) the report. Problems with
// the model file are errors carrying the file and the ONNX node or the Keras config's JSON path /
// the HDF5 path; nothing is written then.
engine::Result<ImportJobResult> runImportJob(const ImportJobRequest& request);

// The user's words for an import error: ErrorText's, plus the ONNX node or Keras layer when the headline does
// not name it already.
QString describeImportError(const engine::Error& e);
// Exit status of kiln-import for it: 1 when writing the results failed, 2 for the model file.
int importExitCode(const engine::Error& e);

// The default weights path for a project path: "x/model.kiln" -> "x/model.safetensors".
std::string defaultWeightsPath(const std::string& projectPath);

}  // namespace kiln::app
