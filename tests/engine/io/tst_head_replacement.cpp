// SPDX-License-Identifier: Apache-2.0
// Head replacement on imported graphs: a Kiln model exported to ONNX and imported back (and the
// cached EfficientNet-Lite0 when it is there) is cut after a node and gets the new head; errors
// name the node or the option; other outputs and name clashes are handled.
#include <QtTest>

#include <cstdlib>
#include <filesystem>

#include "engine/exec/param_store.h"
#include "engine/io/head_replacement.h"
#include "engine/io/model_zoo.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::io;
namespace fs = std::filesystem;

namespace {

Project projectFromNodes(const std::string& nodesJson, const std::string& outputs) {
    auto p = parseProject(R"({"format":"kiln-project","version":2,"name":"t","graph":{"nodes":)" + nodesJson +
                              R"(,"outputs":)" + outputs + "}}",
                          "inline.kiln");
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return *p;
}

// A small CNN exported to ONNX and imported back with readable names: the graph an import gives.
Project importedCnn() {
    Project src = projectFromNodes(R"([
      {"name":"image","op":"Input","attrs":{"shape":[16,16,3]}},
      {"name":"stem","op":"Conv2D","inputs":["image"],"attrs":{"filters":8,"kernel_size":[3,3],"strides":[2,2],"padding":"same","activation":"relu"}},
      {"name":"dw","op":"DepthwiseConv2D","inputs":["stem"],"attrs":{"padding":"same"}},
      {"name":"bn","op":"BatchNormalization","inputs":["dw"]},
      {"name":"act","op":"ReLU","inputs":["bn"]},
      {"name":"gap","op":"GlobalAveragePooling2D","inputs":["act"]},
      {"name":"logits","op":"Dense","inputs":["gap"],"attrs":{"units":10}}])",
                                   R"(["logits"])");
    auto info = ops::analyzeModel(src.graph);
    if (!info.ok()) qFatal("%s", info.error().toString().c_str());
    auto params = exec::ParamStore::create(*info, 3);
    auto bytes = exportOnnx(*info, params, {"cnn", {}, "{}", "test"});
    if (!bytes.ok()) qFatal("%s", bytes.error().toString().c_str());
    ImportOptions options;
    options.readableNames = true;
    auto imported = importOnnx(*bytes, "cnn.onnx", options);
    if (!imported.ok()) qFatal("%s", imported.error().toString().c_str());
    Project p;
    p.name = "cnn";
    p.graph = imported->graph;
    return p;
}

// The node feeding the imported global pooling.
std::string poolInput(const Project& p) {
    for (const auto& n : p.graph.nodes)
        if (n.op == "GlobalAveragePooling2D") return n.inputs.at(0);
    return {};
}

Shape outputShape(const Graph& g) {
    auto info = ops::analyzeModel(g);
    if (!info.ok()) qFatal("%s", info.error().toString().c_str());
    return info->nodes[static_cast<size_t>(info->outputs.at(0))].output;
}

}  // namespace

class TestHeadReplacement : public QObject {
    Q_OBJECT

private slots:
    void cutsAnImportedFeatureMap() {
        const Project p = importedCnn();
        const std::string cut = poolInput(p);
        QVERIFY(!cut.empty());
        QCOMPARE(suggestCutNode(p), cut);
        HeadOptions o;
        o.classes = 7;
        o.dropout = 0.3;
        auto r = replaceHead(p, cut, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY(r->pooled);
        QCOMPARE(r->added, (std::vector<std::string>{"head_pooling", "head_dropout", "head_predictions"}));
        QCOMPARE(r->removed.size(), size_t{2});  // the imported pooling and Dense
        for (const auto& name : r->removed) QVERIFY(r->graph.find(name) < 0);
        QCOMPARE(r->graph.outputs, std::vector<std::string>{"head_predictions"});
        const Node* dense = r->graph.node("head_predictions");
        QCOMPARE(dense->attrs.getInt("units"), int64_t{7});
        QCOMPARE(dense->attrs.getString("activation"), std::string("softmax"));
        QCOMPARE(r->graph.node("head_dropout")->attrs.getFloat("rate"), 0.3);
        QCOMPARE(r->graph.node("head_pooling")->inputs, std::vector<std::string>{cut});
        QCOMPARE(outputShape(r->graph).dims(), (std::vector<int64_t>{-1, 7}));
        // Everything upstream of the cut is untouched.
        for (const auto& n : r->graph.nodes)
            if (const Node* old = p.graph.node(n.name)) QCOMPARE(old->inputs, n.inputs);
    }

    void cutAfterAVectorSkipsPooling() {
        const Project p = importedCnn();
        std::string gap;
        for (const auto& n : p.graph.nodes)
            if (n.op == "GlobalAveragePooling2D") gap = n.name;
        HeadOptions o;
        o.classes = 3;
        o.dropout = 0;
        auto r = replaceHead(p, gap, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY(!r->pooled);
        QCOMPARE(r->added, std::vector<std::string>{"head_predictions"});  // no pooling, no dropout at rate 0
        QCOMPARE(outputShape(r->graph).dims(), (std::vector<int64_t>{-1, 3}));
    }

    void errorsNameTheNodeOrOption() {
        const Project p = importedCnn();
        HeadOptions o;
        o.classes = 4;
        auto missing = replaceHead(p, "no_such_node", o);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().node, std::string("no_such_node"));
        QVERIFY(missing.error().message.find("no_such_node") != std::string::npos);

        HeadOptions zero;
        zero.classes = 0;
        auto noClasses = replaceHead(p, poolInput(p), zero);
        QVERIFY(!noClasses.ok());
        QCOMPARE(noClasses.error().code, ErrorCode::ConfigError);
        QCOMPARE(noClasses.error().param("field"), std::string("classes"));

        HeadOptions badRate;
        badRate.classes = 2;
        badRate.dropout = 1.0;
        auto rate = replaceHead(p, poolInput(p), badRate);
        QVERIFY(!rate.ok());
        QCOMPARE(rate.error().param("field"), std::string("dropout"));

        // A sequence [N, T, F] is neither a feature map nor a vector.
        Project seq = projectFromNodes(R"([
          {"name":"tokens","op":"Input","attrs":{"shape":[10,4]}},
          {"name":"out","op":"Dense","inputs":["tokens"],"attrs":{"units":2}}])",
                                       R"(["out"])");
        auto rank3 = replaceHead(seq, "tokens", o);
        QVERIFY(!rank3.ok());
        QCOMPARE(rank3.error().code, ErrorCode::ShapeMismatch);
        QCOMPARE(rank3.error().node, std::string("tokens"));
    }

    void otherOutputsAndNamesStay() {
        // Two outputs: the cut removes one branch; the other output stays. A node already called
        // head_predictions upstream makes the new one head_predictions_1.
        Project p = projectFromNodes(R"([
          {"name":"x","op":"Input","attrs":{"shape":[8,8,2]}},
          {"name":"head_predictions","op":"Conv2D","inputs":["x"],"attrs":{"filters":4,"kernel_size":[3,3],"padding":"same"}},
          {"name":"aux","op":"GlobalMaxPooling2D","inputs":["x"]},
          {"name":"aux_out","op":"Dense","inputs":["aux"],"attrs":{"units":1}},
          {"name":"pool","op":"GlobalAveragePooling2D","inputs":["head_predictions"]},
          {"name":"main_out","op":"Dense","inputs":["pool"],"attrs":{"units":5}}])",
                                     R"(["main_out","aux_out"])");
        HeadOptions o;
        o.classes = 6;
        auto r = replaceHead(p, "head_predictions", o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->added.back(), std::string("head_predictions_1"));
        QCOMPARE(r->graph.outputs, (std::vector<std::string>{"head_predictions_1", "aux_out"}));
        QCOMPARE(r->removed, (std::vector<std::string>{"pool", "main_out"}));
        QVERIFY(ops::analyzeModel(r->graph).ok());
    }

    void keptNodeSharingRemovedWeightsIsRefused() {
        // Cutting after d1 removes d3 and the Add, but d4 (kept: it reads the input) uses d3's weights.
        HeadOptions o;
        o.classes = 2;
        Project q = projectFromNodes(R"([
          {"name":"a","op":"Input","attrs":{"shape":[4]}},
          {"name":"d1","op":"Dense","inputs":["a"],"attrs":{"units":4}},
          {"name":"d3","op":"Dense","inputs":["d1"],"attrs":{"units":4}},
          {"name":"d4","op":"Dense","inputs":["a"],"attrs":{"units":4},"share_weights_with":"d3"},
          {"name":"sum","op":"Add","inputs":["d3","d4"]}])",
                                     R"(["sum"])");
        auto refused = replaceHead(q, "d1", o);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().node, std::string("d4"));
    }

    void efficientNetLite0() {
        const Backbone* b = findBackbone("efficientnet-lite0");
        QVERIFY(b);
        const auto a = backboneAvailability(*b, defaultDataDir());
        if (!a.available) QSKIP("EfficientNet-Lite0 is not cached (tools/fetch_pretrained.sh)");
        auto p = loadProject(a.projectPath);
        QVERIFY(p.ok());
        QCOMPARE(suggestCutNode(*p), b->cutAfter);
        HeadOptions o;
        o.classes = 5;
        auto r = replaceHead(*p, b->cutAfter, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        auto before = ops::analyzeModel(p->graph);
        auto after = ops::analyzeModel(r->graph);
        QVERIFY(before.ok() && after.ok());
        // 1280 features: the ImageNet classifier (1280·1000 + 1000) gives way to 1280·5 + 5.
        const int64_t n0 = before->parameterCount(true) + before->parameterCount(false);
        const int64_t n1 = after->parameterCount(true) + after->parameterCount(false);
        QCOMPARE(n0 - n1, int64_t{1280 * 1000 + 1000 - (1280 * 5 + 5)});
        QCOMPARE(n0, a.parameters);
    }
};

QTEST_GUILESS_MAIN(TestHeadReplacement)
#include "tst_head_replacement.moc"
