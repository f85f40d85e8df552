// SPDX-License-Identifier: Apache-2.0
// Transfer learning over engine/io's model zoo and head replacement: every value is copied into
// the api's own types (engine/api/pretrained.h) and back.
#include "engine/api/pretrained.h"

#include <utility>

#include "engine/io/head_replacement.h"
#include "engine/io/model_zoo.h"

namespace kiln::engine::api {

namespace {

// The two enumerations list the same sources and kinds; the switches say so to the compiler,
// which warns when one gains a value the other lacks.
BackboneSource convertSource(io::BackboneSource s) {
    switch (s) {
    case io::BackboneSource::Cache: return BackboneSource::Cache;
    case io::BackboneSource::UserFile: return BackboneSource::UserFile;
    }
    return BackboneSource::Cache;
}

io::BackboneSource convertSource(BackboneSource s) {
    switch (s) {
    case BackboneSource::Cache: return io::BackboneSource::Cache;
    case BackboneSource::UserFile: return io::BackboneSource::UserFile;
    }
    return io::BackboneSource::Cache;
}

PreprocessingMismatch::Kind toApi(io::PreprocessingMismatch::Kind k) {
    switch (k) {
    case io::PreprocessingMismatch::Kind::Size: return PreprocessingMismatch::Kind::Size;
    case io::PreprocessingMismatch::Kind::Normalization: return PreprocessingMismatch::Kind::Normalization;
    case io::PreprocessingMismatch::Kind::NoNormalization: return PreprocessingMismatch::Kind::NoNormalization;
    }
    return PreprocessingMismatch::Kind::Size;
}

// The api's structs and the engine's have members of the same names and types, so one template
// copies either way and the two directions cannot list different members.
template <class To, class From>
To copyPreprocessing(const From& p) {
    To out;
    out.height = p.height;
    out.width = p.width;
    out.resize = p.resize;
    out.channelOrder = p.channelOrder;
    out.preset = p.preset;
    out.scale = p.scale;
    out.mean = p.mean;
    out.stddev = p.stddev;
    out.formula = p.formula;
    return out;
}

template <class To, class From>
To copyBackbone(const From& b) {
    To out;
    out.id = b.id;
    out.name = b.name;
    out.dataset = b.dataset;
    out.preprocessing = copyPreprocessing<decltype(out.preprocessing)>(b.preprocessing);
    out.licence = b.licence;
    out.weightsOrigin = b.weightsOrigin;
    out.source = convertSource(b.source);
    out.cacheDir = b.cacheDir;
    out.projectFile = b.projectFile;
    out.weightsFile = b.weightsFile;
    out.fetchCommand = b.fetchCommand;
    out.cutAfter = b.cutAfter;
    out.note = b.note;
    return out;
}

}  // namespace

const std::vector<Backbone>& backboneCatalogue() {
    // Copied once from the engine's catalogue, which is itself built once and never changes.
    static const std::vector<Backbone> list = [] {
        std::vector<Backbone> out;
        for (const auto& b : io::backboneCatalogue()) out.push_back(copyBackbone<Backbone>(b));
        return out;
    }();
    return list;
}

const Backbone* findBackbone(const std::string& id) {
    for (const auto& b : backboneCatalogue())
        if (b.id == id) return &b;
    return nullptr;
}

std::string defaultDataDir() {
    return io::defaultDataDir();
}

BackboneAvailability backboneAvailability(const Backbone& backbone, const std::string& dataDir) {
    const io::BackboneAvailability a = io::backboneAvailability(copyBackbone<io::Backbone>(backbone), dataDir);
    BackboneAvailability out;
    out.available = a.available;
    out.projectPath = a.projectPath;
    out.weightsPath = a.weightsPath;
    out.missing = a.missing;
    out.parameters = a.parameters;
    return out;
}

PretrainedWeights pretrainedWeights(const io::Project& project, const std::string& projectPath, const std::string& dataDir) {
    const io::PretrainedWeights w = io::pretrainedWeights(project, projectPath, dataDir);
    PretrainedWeights out;
    out.path = w.path;
    out.exists = w.exists;
    out.backbone = w.backbone ? findBackbone(w.backbone->id) : nullptr;
    return out;
}

Result<PretrainedProject> createPretrainedProject(const PretrainedProjectRequest& request) {
    io::PretrainedProjectRequest req;
    req.backbone = request.backbone;
    req.modelFile = request.modelFile;
    req.importedProject = request.importedProject;
    req.importedWeights = request.importedWeights;
    req.dataDir = request.dataDir;
    req.projectPath = request.projectPath;
    req.cutAfter = request.cutAfter;
    req.classes = request.classes;
    req.dropout = request.dropout;
    req.dataFolder = request.dataFolder;
    req.learningRate = request.learningRate;
    req.headEpochs = request.headEpochs;
    req.allEpochs = request.allEpochs;
    req.fineTuneFactor = request.fineTuneFactor;
    KILN_ASSIGN(io::PretrainedProject made, io::createPretrainedProject(req));
    PretrainedProject out;
    out.project = std::move(made.project);
    out.projectPath = std::move(made.projectPath);
    out.weightsPath = std::move(made.weightsPath);
    out.head = std::move(made.head);
    out.removed = std::move(made.removed);
    out.weightTensors = made.weightTensors;
    return out;
}

std::vector<PreprocessingMismatch> preprocessingMismatches(const io::Project& project) {
    std::vector<PreprocessingMismatch> out;
    for (auto& m : io::preprocessingMismatches(project)) {
        PreprocessingMismatch a;
        a.kind = toApi(m.kind);
        a.backbone = std::move(m.backbone);
        a.height = m.height;
        a.width = m.width;
        a.wantHeight = m.wantHeight;
        a.wantWidth = m.wantWidth;
        a.formula = std::move(m.formula);
        a.message = std::move(m.message);
        out.push_back(std::move(a));
    }
    return out;
}

Result<HeadReplacement> replaceHead(const io::Project& project, const std::string& cutNode, const HeadOptions& options) {
    io::HeadOptions o;
    o.classes = options.classes;
    o.dropout = options.dropout;
    o.prefix = options.prefix;
    KILN_ASSIGN(io::HeadReplacement r, io::replaceHead(project, cutNode, o));
    HeadReplacement out;
    out.graph = std::move(r.graph);
    out.removed = std::move(r.removed);
    out.added = std::move(r.added);
    out.pooled = r.pooled;
    return out;
}

std::string suggestCutNode(const io::Project& project) {
    return io::suggestCutNode(project);
}

}  // namespace kiln::engine::api
