// SPDX-License-Identifier: Apache-2.0
// Transfer learning as the studio offers it: the backbone catalogue and its availability on this
// machine, a new project from a pretrained backbone, the weights and preprocessing such a project
// expects, and replacing a model's head. The types here belong to this header; the catalogue and
// the project edits behind it (engine/io's model zoo and head replacement) stay inside the engine,
// and their values are copied into these at the boundary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/graph/graph.h"
#include "engine/io/project.h"

namespace kiln::engine::api {

// How a backbone's input pictures are made: resized to height x width, channels in `channelOrder`,
// then x' = (x·scale − mean[c]) / stddev[c] on values 0–255 (a Kiln "normalize" transform).
struct BackbonePreprocessing {
    int64_t height = 0, width = 0;
    std::string resize = "bilinear";
    std::string channelOrder = "RGB";
    std::string preset;  // the Kiln normalize preset these numbers are ("centered", "imagenet"...)
    double scale = 1.0;
    std::vector<double> mean, stddev;
    std::string formula;  // as people write it: "(x - 127) / 128"
};

enum class BackboneSource {
    Cache,     // prepared on this machine (a fetch script writes the project and the weights)
    UserFile,  // a template: the architecture and weights come from a file the user gives
};

struct Backbone {
    std::string id;       // "efficientnet-lite0"
    std::string name;     // "EfficientNet-Lite0"
    std::string dataset;  // what the weights were trained on
    BackbonePreprocessing preprocessing;
    std::string licence;
    std::string weightsOrigin;  // where the weights come from
    BackboneSource source = BackboneSource::Cache;
    std::string cacheDir;      // Cache: relative to the data folder
    std::string projectFile;   // Cache: inside cacheDir
    std::string weightsFile;   // Cache: inside cacheDir
    std::string fetchCommand;  // Cache: how to get it when it is missing
    std::string cutAfter;      // the node feeding the original classifier (Keras/Kiln name)
    std::string note;          // what the entry cannot do, or how to make a file for a template
};

// Every backbone Kiln knows, in display order.
const std::vector<Backbone>& backboneCatalogue();
// The catalogue's entry with this id; nullptr when there is none.
const Backbone* findBackbone(const std::string& id);

// The data folder: $KILN_DATA, else ~/.cache/kiln/data.
std::string defaultDataDir();

struct BackboneAvailability {
    bool available = false;   // Cache: project and weights present and readable; UserFile: never by itself
    std::string projectPath;  // Cache: the cached Kiln project
    std::string weightsPath;  // Cache: the cached weights
    std::string missing;      // Cache, unavailable: the first file missing
    int64_t parameters = -1;  // from the real graph when available, else -1
};
// Looks at the files (and, when they are there, counts the parameters of the cached graph).
BackboneAvailability backboneAvailability(const Backbone& backbone, const std::string& dataDir);

// The start weights of a project made from a backbone ("pretrained" in the file): its "weights"
// entry resolved as data paths are (relative to `projectPath`, ${KILN_DATA}...); when that file is
// not there (or the project has no folder of its own, as a shipped example opened in place) and
// the backbone is one the catalogue caches, the cached weights of the data folder, as New from
// Pretrained finds them. `exists` says whether the file returned is there; `backbone` is the
// catalogue entry (backboneCatalogue()), if any: its fetchCommand gets a missing cache. Empty
// path: no weights named.
struct PretrainedWeights {
    std::string path;
    bool exists = false;
    const Backbone* backbone = nullptr;
};
PretrainedWeights pretrainedWeights(const io::Project& project, const std::string& projectPath, const std::string& dataDir = {});

struct PretrainedProjectRequest {
    std::string backbone;   // catalogue id
    std::string modelFile;  // UserFile backbones: the .keras, .h5 or .onnx file
    // UserFile backbones, instead of reading modelFile here: that file as kiln-import has already
    // read it (in a child process, which a damaged file cannot take the caller down with), its
    // project and weights; modelFile then only names the original in errors and in the project.
    std::string importedProject, importedWeights;
    std::string dataDir;      // "" : defaultDataDir()
    std::string projectPath;  // the .kiln to write; the weights go beside it as <stem>.safetensors
    std::string cutAfter;     // "" : the catalogue's node when the graph has it, else suggestCutNode
    int64_t classes = 0;
    double dropout = 0.2;
    std::string dataFolder;  // "" : no data source yet (the transforms are still set)
    double learningRate = 1e-3;
    int headEpochs = 3;  // stage "head only": the backbone frozen
    int allEpochs = 2;   // stage "all": everything, at learningRate · fineTuneFactor
    double fineTuneFactor = 0.1;
};

struct PretrainedProject {
    io::Project project;
    std::string projectPath, weightsPath;
    std::vector<std::string> head;  // the new head's nodes
    std::vector<std::string> removed;
    int64_t weightTensors = 0;  // backbone tensors written to the weights file
};

// Makes (and writes) the project: the backbone's graph cut after its feature extractor with a new
// head, every backbone node frozen, stages "head only" then "all", the data section's transforms
// set to the backbone's preprocessing, and the backbone's weights (those of kept nodes) written
// beside it, to be loaded by name (the new head starts fresh). The project records the backbone
// under "pretrained". Errors name the backbone, the file or the node; nothing is written then.
Result<PretrainedProject> createPretrainedProject(const PretrainedProjectRequest& request);

// One way a project's data preparation differs from what its backbone was trained with.
struct PreprocessingMismatch {
    enum class Kind { Size,
                      Normalization,
                      NoNormalization } kind = Kind::Size;
    std::string backbone;                   // the backbone's name
    int64_t height = 0, width = 0;          // Size: what the transforms make
    int64_t wantHeight = 0, wantWidth = 0;  // Size: the backbone's input
    std::string formula;                    // the backbone's normalisation, "(x - 127) / 128"
    std::string message;                    // the English sentence
};

// A project made from a backbone ("pretrained" in the file) whose data section (eval_transforms,
// else transforms) prepares pictures otherwise than the backbone expects: one entry per difference;
// empty when they agree, or when the project was not made from a backbone or has no transforms.
std::vector<PreprocessingMismatch> preprocessingMismatches(const io::Project& project);

struct HeadOptions {
    int64_t classes = 0;          // units of the new Dense; at least 1
    double dropout = 0.2;         // rate of the new Dropout in [0, 1); 0 leaves the Dropout out
    std::string prefix = "head";  // new nodes are "<prefix>_pooling", "<prefix>_dropout", "<prefix>_predictions"
};

struct HeadReplacement {
    Graph graph;                       // the project's graph after the cut, with the new head
    std::vector<std::string> removed;  // the nodes downstream of the cut node, file order
    std::vector<std::string> added;    // the new head's nodes, in order
    bool pooled = false;               // a pooling node was added (the cut node's output was rank 4)
};

// Removes every node downstream of `cutNode` (whatever reads it, directly or not) and attaches a
// new classification head to it (GlobalAveragePooling2D -> Dropout -> Dense with softmax). The new
// Dense becomes the model's output in place of the outputs removed (other outputs stay). The cut
// node must give [N, H, W, C] (pooled first) or [N, features]. Errors name the node or the option.
Result<HeadReplacement> replaceHead(const io::Project& project, const std::string& cutNode, const HeadOptions& options);

// The node a head is usually cut after: the one feeding the last global pooling node, else the last
// node (in topological order) with a rank-4 output; empty when there is neither.
std::string suggestCutNode(const io::Project& project);

}  // namespace kiln::engine::api
