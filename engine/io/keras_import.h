// SPDX-License-Identifier: Apache-2.0
// Kiln's Keras reader: a Keras 3 ".keras" archive or a legacy Keras 2 / tf.keras ".h5" model
// becomes a Kiln graph (Keras layer names kept) and its weights, with the same mapping report and
// Placeholder nodes as the ONNX reader. Also: telling model files apart and loading any of them.
#pragma once

#include <string>

#include "engine/io/onnx_import.h"

namespace kiln::engine::io {

// Reads a .keras archive (config.json + model.weights.h5) or a legacy .h5 model (the
// "model_config" attribute + the "model_weights" group). Functional and Sequential models; nested
// models are flattened into "<model>/<layer>" nodes. Errors name the file and the JSON path of
// the config entry or the HDF5 path of the weights; they never abort.
Result<ImportedModel> loadKeras(const std::string& path, const ImportOptions& options = {});

enum class ModelFileFormat { Onnx, KerasArchive, KerasH5 };

// The format of a model file from its first bytes (zip, HDF5), else from its extension
// (.onnx, .keras, .h5/.hdf5); a file that is none of these is an UnsupportedFormat error.
Result<ModelFileFormat> detectModelFile(const std::string& path);

// loadOnnx or loadKeras, as detectModelFile says.
Result<ImportedModel> loadModelFile(const std::string& path, const ImportOptions& options = {});

}  // namespace kiln::engine::io
