// SPDX-License-Identifier: Apache-2.0
// The import job: ONNX or Keras -> Kiln graph (readable names, placeholders for what Kiln cannot
// compute), the editor layout, the project, the weights in safetensors and the JSON import report.
#include "app/kiln_import/import_job.h"

#include <QCoreApplication>

#include <filesystem>

#include "app/common/error_text.h"

#include "engine/io/head_replacement.h"
#include "engine/io/keras_import.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "ui/graph_editor/graph_layout.h"

namespace kiln::app {
namespace fs = std::filesystem;
using engine::Error;
using engine::ErrorCode;
using nlohmann::json;

namespace {

// Node positions as the editor stores them ({"nodes": {name: [x, y]}}), from the editor's own
// layered layout, so the project opens laid out top to bottom.
json editorLayout(const engine::Graph& graph) {
    std::vector<std::vector<int>> inputs(graph.nodes.size());
    for (size_t i = 0; i < graph.nodes.size(); ++i)
        for (const auto& in : graph.nodes[i].inputs)
            if (int j = graph.find(in); j >= 0) inputs[i].push_back(j);
    const auto pos = ui::layeredLayout(inputs);
    json nodes = json::object();
    for (size_t i = 0; i < pos.size(); ++i) nodes[graph.nodes[i].name] = json::array({pos[i].x(), pos[i].y()});
    return {{"nodes", std::move(nodes)}};
}

// The report's keys name the source format: "onnx_name"/"onnx_op" for ONNX nodes,
// "keras_name"/"keras_class" for Keras layers.
json makeReport(const ImportJobRequest& req, const ImportJobResult& r) {
    const auto& m = r.model;
    const bool keras = m.format == "keras";
    const std::string nameKey = keras ? "keras_name" : "onnx_name";
    const std::string opKey = keras ? "keras_class" : "onnx_op";
    json inputs = json::array();
    for (size_t k = 0; k < m.inputs.size(); ++k) {
        const auto* node = m.graph.node(m.inputs[k]);
        json shape = node ? json(node->attrs.getInts("shape")) : json::array();
        json in = {{"name", m.inputs[k]}, {"shape", shape}};
        if (!keras) in["onnx_layout"] = m.inputChannelFirst[k] ? "NCHW" : "as in Kiln";
        inputs.push_back(std::move(in));
    }
    json outputs = json::array();
    for (size_t k = 0; k < m.outputs.size(); ++k) outputs.push_back({{m.format, m.outputs[k]}, {"kiln_node", m.graph.outputs[k]}});
    json nodes = json::array();
    std::map<std::string, int> counts;
    for (const auto& map : m.mapping) {
        json j = {{nameKey, map.sourceName}, {opKey, map.sourceOp}, {"kind", engine::io::mappingKindName(map.kind)},
                  {"kiln_nodes", map.kilnNodes}};
        if (!map.reason.empty()) j["reason"] = map.reason;
        nodes.push_back(std::move(j));
        ++counts[engine::io::mappingKindName(map.kind)];
    }
    json weights = json::array();
    for (const auto& w : m.weights) weights.push_back({{"name", w.name}, {"shape", w.tensor.shape().dims()}});
    json placeholders = json::array();
    for (const auto& name : m.placeholders) {
        const auto* node = m.graph.node(name);
        json p = {{"kiln_node", name}, {opKey, node ? node->attrs.getString(opKey) : std::string()}};
        if (node && node->attrs.has("output_shape")) p["output_shape"] = node->attrs.getInts("output_shape");
        else p["output_shape"] = nullptr;
        // The weights the source file holds for it, kept in the weights file under "<node>/".
        json kept = json::array();
        for (const auto& w : m.weights)
            if (w.name.size() > name.size() && w.name.compare(0, name.size(), name) == 0 && w.name[name.size()] == '/') kept.push_back(w.name);
        p["weight_tensors"] = std::move(kept);
        placeholders.push_back(std::move(p));
    }
    json report = {{"format", "kiln-import-report"},
            {"version", 1},
            {"source", req.model},
            {"source_format", m.format},
            {"producer", m.producer},
            {"project", r.projectPath},
            {"weights", r.weightsPath},
            {"inputs", inputs},
            {"outputs", outputs},
            {"summary",
             {{keras ? "keras_layers" : "onnx_nodes", m.mapping.size()},
              {"kiln_nodes", m.graph.nodes.size()},
              {"node", counts["node"]},
              {"folded", counts["folded"]},
              {"pass_through", counts["pass-through"]},
              {"constant", counts["constant"]},
              {"placeholders", m.placeholders.size()},
              {"weight_tensors", m.weights.size()},
              {"parameters", r.parameterCount}}},
            {"nodes", nodes},
            {"weight_tensors", weights},
            {"placeholders", placeholders}};
    if (!keras) report["opset"] = m.opset;
    return report;
}

}  // namespace

class ImportText {
    Q_DECLARE_TR_FUNCTIONS(ImportText)
};

QString describeImportError(const engine::Error& e) {
    // A child process that reads the model (import_process.h) ended without its own error.
    const QString file = QString::fromStdString(e.file);
    const std::string reason = e.param("reason");
    if (e.code == ErrorCode::Cancelled) return ImportText::tr("%1: the import was cancelled; nothing was written").arg(file);
    if (reason == "timeout")
        return ImportText::tr(
                   "%1: reading the model did not finish within %2 s; the file is probably damaged (the HDF5 library "
                   "does not stop on some damage)")
            .arg(file, QString::fromStdString(e.param("seconds")));
    if (reason == "crashed") return ImportText::tr("%1: the HDF5 library crashed reading the model; the file is damaged").arg(file);
    if (reason == "not started")
        return ImportText::tr("%1: could not start %2, which reads the model: %3")
            .arg(file, QString::fromStdString(e.param("program")), QString::fromStdString(e.message));
    if (reason == "no program") return ImportText::tr("%1: kiln-import, which reads the model, was not found next to Kiln or on PATH").arg(file);
    QString text = ErrorText::describe(e);
    const QString node = QString::fromStdString(e.node);
    if (!node.isEmpty() && !text.contains(QLatin1Char('"') + node + QLatin1Char('"')))
        text += QLatin1Char(' ') + (e.param("json_path").empty() && e.param("hdf5_path").empty() && e.param("zip_member").empty()
                                        ? ImportText::tr("(ONNX node \"%1\")").arg(node)
                                        : ImportText::tr("(Keras layer \"%1\")").arg(node));
    return text;
}

int importExitCode(const engine::Error& e) {
    return e.code == ErrorCode::FileWrite || e.code == ErrorCode::OutOfMemory || e.code == ErrorCode::Internal ? 1 : 2;
}

std::string defaultWeightsPath(const std::string& projectPath) {
    fs::path p(projectPath);
    p.replace_extension(".safetensors");
    return p.string();
}

engine::Result<ImportJobResult> runImportJob(const ImportJobRequest& req) {
    if (req.project.empty()) return Error(ErrorCode::InvalidArgument, "no project file to write was given").with("field", "project");
    engine::io::ImportOptions options;
    options.readableNames = true;
    options.placeholders = true;
    KILN_ASSIGN(engine::io::ImportedModel model, engine::io::loadModelFile(req.model, options));

    ImportJobResult r;
    if (!req.replaceHeadAfter.empty()) {
        // The node may be named as in the source file: its last Kiln node is the one to cut after.
        std::string cut = req.replaceHeadAfter;
        if (model.graph.find(cut) < 0)
            for (const auto& map : model.mapping)
                if (map.sourceName == cut && !map.kilnNodes.empty()) cut = map.kilnNodes.back();
        engine::io::Project source;
        source.graph = model.graph;
        engine::io::HeadOptions head;
        head.classes = req.classes;
        head.dropout = req.dropout;
        KILN_ASSIGN(engine::io::HeadReplacement cutResult, engine::io::replaceHead(source, cut, head));
        std::map<std::string, std::string> sourceOutput;  // Kiln output -> the file's output name
        for (size_t k = 0; k < model.outputs.size() && k < model.graph.outputs.size(); ++k)
            sourceOutput[model.graph.outputs[k]] = model.outputs[k];
        model.graph = std::move(cutResult.graph);
        model.outputs.clear();
        for (const auto& out : model.graph.outputs)
            model.outputs.push_back(sourceOutput.count(out) ? sourceOutput[out] : out);
        // The weights of the nodes cut off go; the new head starts from the initialisers.
        std::erase_if(model.weights, [&](const engine::io::NamedTensor& w) { return model.graph.find(w.name.substr(0, w.name.rfind('/'))) < 0; });
        std::erase_if(model.placeholders, [&](const std::string& n) { return model.graph.find(n) < 0; });
        r.headRemoved = std::move(cutResult.removed);
        r.headAdded = std::move(cutResult.added);
    }
    r.projectPath = req.project;
    r.weightsPath = req.weightsOut.empty() ? defaultWeightsPath(req.project) : req.weightsOut;
    r.reportPath = req.reportOut;
    for (const auto& w : model.weights) r.parameterCount += w.tensor.numel();

    engine::io::Project project;
    project.name = fs::path(req.project).stem().string();
    project.graph = model.graph;
    project.layout = editorLayout(model.graph);
    // Where the project came from and which weights belong to it (kept as an unknown field).
    std::error_code ec;
    const fs::path projectDir = fs::absolute(req.project, ec).parent_path().lexically_normal();
    const fs::path weightsRel = fs::absolute(r.weightsPath, ec).lexically_normal().lexically_relative(projectDir);
    project.extra["imported_from"] = {{"file", fs::path(req.model).filename().string()},
                                      {"format", model.format},
                                      {"weights", weightsRel.empty() ? r.weightsPath : weightsRel.generic_string()},
                                      {"placeholders", model.placeholders}};
    if (model.format == "onnx") project.extra["imported_from"]["opset"] = model.opset;
    else project.extra["imported_from"]["producer"] = model.producer;
    r.model = std::move(model);
    r.report = makeReport(req, r);
    if (!req.replaceHeadAfter.empty()) {
        r.report["head"] = {{"cut_after", r.model.graph.node(r.headAdded.front())->inputs.front()},
                            {"removed", r.headRemoved},
                            {"added", r.headAdded},
                            {"classes", req.classes},
                            {"dropout", req.dropout}};
        project.extra["imported_from"]["head"] = r.report["head"];
    }

    std::map<std::string, std::string> meta{{"source", fs::path(req.model).filename().string()}, {"format", "kiln-import"}};
    KILN_TRY(engine::io::saveSafetensors(r.weightsPath, r.model.weights, meta));
    KILN_TRY(engine::io::saveProject(project, req.project));
    if (!req.reportOut.empty()) KILN_TRY(engine::io::writeFileAtomic(req.reportOut, r.report.dump(1) + "\n"));
    return r;
}

}  // namespace kiln::app
