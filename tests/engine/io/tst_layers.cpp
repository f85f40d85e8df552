// SPDX-License-Identifier: Apache-2.0
// Composite layers: definitions in project files and the bundled library, expansion into
// primitive nodes (names, attribute substitution, nesting, outputs, shared weights), the errors
// for recursion, bad attributes and missing inputs, training that matches the same network
// written out flat, and ONNX export of an expanded model.
#include <QtTest>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/exec/param_store.h"
#include "engine/io/layers.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::io;
using nlohmann::json;

namespace {

// A project with `layers` (a JSON list, or empty) and `nodes`.
std::string projectText(const std::string& layers, const std::string& nodes, const std::string& outputs = "") {
    std::string text = R"({"format": "kiln-project", "version": 2, "name": "t",)";
    if (!layers.empty()) text += "\n\"layers\": " + layers + ",";
    text += "\n\"graph\": {\"nodes\": " + nodes;
    if (!outputs.empty()) text += ", \"outputs\": " + outputs;
    return text + "}}\n";
}

Project parsed(const std::string& text) {
    auto p = parseProject(text, "layers.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

Graph expanded(const std::string& text) {
    Project p = parsed(text);
    auto g = modelGraph(p);
    if (!g.ok()) qFatal("modelGraph: %s", g.error().toString().c_str());
    return std::move(g).value();
}

std::vector<std::string> names(const Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes) out.push_back(n.name);
    return out;
}

// A conv block with an exposed attribute, a default and a forwarded kernel size.
const char* kBlockLayer = R"([{
  "name": "Block", "doc": "conv, batch norm, relu",
  "inputs": ["x"], "outputs": ["act"],
  "attributes": [
    {"name": "filters", "type": "int", "default": 4, "min": 1, "max": 512, "doc": "output channels"},
    {"name": "kernel", "type": "int", "default": 3, "min": 1},
    {"name": "act_kind", "type": "string", "default": "relu", "choices": ["relu", "tanh"]}
  ],
  "nodes": [
    {"name": "conv", "op": "Conv2D", "inputs": ["x"],
     "attrs": {"filters": {"$attr": "filters"}, "kernel_size": {"$attr": "kernel"}, "padding": "same"}},
    {"name": "bn", "op": "BatchNormalization", "inputs": ["conv"]},
    {"name": "act", "op": "ReLU", "inputs": ["bn"]}
  ]
}])";

const char* kImage = R"({"name": "image", "op": "Input", "attrs": {"shape": [6, 6, 2]}})";

Error expansionError(const std::string& layers, const std::string& nodes) {
    auto p = parseProject(projectText(layers, nodes), "layers.kiln");
    if (!p.ok()) return p.error();
    auto g = modelGraph(*p);
    if (!g.ok()) return g.error();
    auto m = ops::analyzeModel(*g);
    if (!m.ok()) return m.error();
    qFatal("expected an error");
}

// Two classes of 6x6x2 images: class 1 has a brighter first channel.
data::InMemoryDataset images(int64_t n, uint64_t stream) {
    data::Column x;
    x.name = "image";
    x.sampleShape = Shape{6, 6, 2};
    data::Column y;
    y.name = "label";
    y.sampleShape = Shape{};
    for (int64_t i = 0; i < n; ++i) {
        const int c = static_cast<int>(i % 2);
        y.values.push_back(static_cast<float>(c));
        for (int64_t e = 0; e < 72; ++e)
            x.values.push_back(rng::normal(5, stream, static_cast<uint64_t>(i * 72 + e)) + (c && e % 2 == 0 ? 1.0f : 0.0f));
    }
    auto set = data::InMemoryDataset::create(n, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("dataset: %s", set.error().toString().c_str());
    return std::move(set).value();
}

struct TrainRun {
    std::vector<double> stepLosses;
    std::vector<std::pair<std::string, std::vector<float>>> weights;  // name and values after training
};

// Two towers of 4 features each and a 0/1 label that depends on both.
data::InMemoryDataset towers(int64_t n, uint64_t stream) {
    data::Column a, b, y;
    a.name = "tower_a";
    b.name = "tower_b";
    a.sampleShape = b.sampleShape = Shape{4};
    y.name = "label";
    y.sampleShape = Shape{1};
    for (int64_t i = 0; i < n; ++i) {
        float s = 0;
        for (int64_t e = 0; e < 4; ++e) {
            a.values.push_back(rng::normal(stream, 1, static_cast<uint64_t>(i * 4 + e)));
            b.values.push_back(rng::normal(stream, 2, static_cast<uint64_t>(i * 4 + e)));
            s += a.values.back() - 0.5f * b.values.back();
        }
        y.values.push_back(s > 0 ? 1.0f : 0.0f);
    }
    auto set = data::InMemoryDataset::create(n, {std::move(a), std::move(b), std::move(y)});
    if (!set.ok()) qFatal("dataset: %s", set.error().toString().c_str());
    return std::move(set).value();
}

const char* kClassifierConfig = R"({"epochs": 2, "batch_size": 16, "seed": 7,
    "optimizer": {"type": "adam", "learning_rate": 0.01},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})";

TrainRun trainGraph(const Graph& g, data::InMemoryDataset set, const char* config) {
    auto m = ops::analyzeModel(g);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    auto c = train::parseTrainingConfig(json::parse(config), m->graph);
    if (!c.ok()) qFatal("config: %s", c.error().toString().c_str());
    train::DataBundle b;
    b.train = std::move(set);
    ThreadPool pool(2);
    auto t = train::Trainer::create(*m, *c, std::move(b), pool);
    if (!t.ok()) qFatal("Trainer::create: %s", t.error().toString().c_str());
    TrainRun run;
    auto fit = (*t)->fit([&](const train::TrainEvent& e) {
        if (e.kind == train::TrainEvent::Kind::Step) run.stepLosses.push_back(e.loss);
    });
    if (!fit.ok()) qFatal("fit: %s", fit.error().toString().c_str());
    for (const auto& p : (*t)->params().params()) {
        const float* d = p.value.data<float>();
        run.weights.emplace_back(p.name, std::vector<float>(d, d + p.value.numel()));
    }
    return run;
}

TrainRun trainGraph(const Graph& g) { return trainGraph(g, images(64, 1), kClassifierConfig); }

// Sequences of 8 token ids from a vocabulary of 10; the label is 1 where ids below 5 outnumber the
// others, so the class depends on every position.
data::InMemoryDataset sequences(int64_t n, uint64_t stream) {
    data::Column x;
    x.name = "tokens";
    x.sampleShape = Shape{8};
    data::Column y;
    y.name = "label";
    y.sampleShape = Shape{};
    for (int64_t i = 0; i < n; ++i) {
        int low = 0;
        for (int64_t t = 0; t < 8; ++t) {
            const float u = rng::uniform(stream, 3, static_cast<uint64_t>(i * 8 + t));
            const int id = std::min(9, static_cast<int>(u * 10.0f));
            low += id < 5 ? 1 : 0;
            x.values.push_back(static_cast<float>(id));
        }
        y.values.push_back(low > 4 ? 1.0f : 0.0f);
    }
    auto set = data::InMemoryDataset::create(n, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("dataset: %s", set.error().toString().c_str());
    return std::move(set).value();
}

}  // namespace

class TestLayers : public QObject {
    Q_OBJECT

private slots:
    void expandsNamesAndAttributes() {
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "block3", "op": "Block", "inputs": ["image"], "attrs": {"filters": 8}},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["block3"]}])";
        Graph g = expanded(projectText(kBlockLayer, nodes, R"(["block3"])"));
        QCOMPARE(names(g), (std::vector<std::string>{"image", "block3/conv", "block3/bn", "block3/act", "pool"}));
        const Node* conv = g.node("block3/conv");
        QCOMPARE(conv->attrs.getInt("filters"), int64_t{8});        // from the instance
        QCOMPARE(conv->attrs.getInt("kernel_size"), int64_t{3});    // the layer's default
        QCOMPARE(conv->attrs.getString("padding"), std::string("same"));  // fixed in the layer
        QCOMPARE(conv->inputs, std::vector<std::string>{"image"});
        QCOMPARE(g.node("block3/bn")->inputs, std::vector<std::string>{"block3/conv"});
        QCOMPARE(g.node("pool")->inputs, std::vector<std::string>{"block3/act"});
        QCOMPARE(g.outputs, std::vector<std::string>{"block3/act"});

        auto m = ops::analyzeModel(g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        exec::ParamStore params = exec::ParamStore::create(*m, 1);
        std::set<std::string> pnames;
        for (const auto& p : params.params()) pnames.insert(p.name);
        QVERIFY(pnames.count("block3/conv/kernel"));
        QVERIFY(pnames.count("block3/bn/gamma"));
        QCOMPARE(m->info("block3/conv").output, (Shape{-1, 6, 6, 8}));
    }

    void graphWithoutInstancesIsUnchanged() {
        Project p = parsed(projectText("", std::string("[") + kImage + R"(, {"name": "f", "op": "Flatten", "inputs": ["image"]}])"));
        auto g = modelGraph(p);
        QVERIFY(g.ok());
        QCOMPARE(names(*g), names(p.graph));
    }

    void bundledLayerByName() {
        // No "layers" section: the bundled library is always there.
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "stem", "op": "ConvBNReLU", "inputs": ["image"], "attrs": {"filters": 4, "strides": 2}},
          {"name": "res", "op": "ResidualBlock", "inputs": ["stem"], "attrs": {"filters": 4}},
          {"name": "down", "op": "ResidualProjectionBlock", "inputs": ["res"], "attrs": {"filters": 8}},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["down"]},
          {"name": "head", "op": "DenseBNReLU", "inputs": ["pool"], "attrs": {"units": 5}}])";
        Project p = parsed(projectText("", nodes));
        QVERIFY(p.layers.empty());
        auto g = modelGraph(p);
        QVERIFY2(g.ok(), g.ok() ? "" : g.error().toString().c_str());
        auto m = ops::analyzeModel(*g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->info("stem/conv").output, (Shape{-1, 3, 3, 4}));
        QCOMPARE(g->node("res/add")->inputs, (std::vector<std::string>{"res/bn2", "stem/relu"}));
        QCOMPARE(m->info("down/relu2").output, (Shape{-1, 2, 2, 8}));
        QCOMPARE(m->info("head/relu").output, (Shape{-1, 5}));
        for (const auto& name : {"ConvBNReLU", "ResidualBlock", "ResidualProjectionBlock", "DenseBNReLU", "InvertedResidual",
                                 "InvertedBottleneck"})
            QVERIFY2(bundledLayers().find(name), name);
    }

    // MobileNetV2's blocks from the library: the inverted residual (expansion, depthwise, linear
    // projection, identity shortcut) and the strided bottleneck without shortcut, with readable
    // weight names.
    void bundledInvertedResiduals() {
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "stem", "op": "ConvBNReLU", "inputs": ["image"], "attrs": {"filters": 8}},
          {"name": "ir", "op": "InvertedResidual", "inputs": ["stem"], "attrs": {"filters": 8, "expanded_filters": 48}},
          {"name": "down", "op": "InvertedBottleneck", "inputs": ["ir"], "attrs": {"filters": 12, "expanded_filters": 48}},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["down"]}])";
        Project p = parsed(projectText("", nodes));
        auto g = modelGraph(p);
        QVERIFY2(g.ok(), g.ok() ? "" : g.error().toString().c_str());
        QCOMPARE(names(*g), (std::vector<std::string>{"image", "stem/conv", "stem/bn", "stem/relu", "ir/expand", "ir/expand_bn",
                                                      "ir/expand_relu", "ir/depthwise", "ir/depthwise_bn", "ir/depthwise_relu",
                                                      "ir/project", "ir/project_bn", "ir/add", "down/expand", "down/expand_bn",
                                                      "down/expand_relu", "down/depthwise", "down/depthwise_bn",
                                                      "down/depthwise_relu", "down/project", "down/project_bn", "pool"}));
        QCOMPARE(g->node("ir/add")->inputs, (std::vector<std::string>{"stem/relu", "ir/project_bn"}));
        QCOMPARE(g->node("ir/expand_relu")->op, std::string("ReLU6"));
        auto m = ops::analyzeModel(*g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->info("ir/expand_relu").output, (Shape{-1, 6, 6, 48}));
        QCOMPARE(m->info("ir/add").output, (Shape{-1, 6, 6, 8}));
        QCOMPARE(m->info("down/depthwise").output, (Shape{-1, 3, 3, 48}));
        QCOMPARE(m->info("down/project_bn").output, (Shape{-1, 3, 3, 12}));
        exec::ParamStore params = exec::ParamStore::create(*m, 1);
        std::set<std::string> pnames;
        for (const auto& q : params.params()) pnames.insert(q.name);
        for (const char* name : {"ir/expand/kernel", "ir/depthwise/depthwise_kernel", "ir/project/kernel", "ir/project_bn/gamma",
                                 "down/depthwise/depthwise_kernel"})
            QVERIFY2(pnames.count(name), name);
        QVERIFY(!pnames.count("ir/depthwise/bias"));  // no biases before batch normalisation

        // The identity shortcut needs `filters` channels in: another width is refused at the add.
        Project wrong = parsed(projectText("", std::string("[") + kImage + R"(,
          {"name": "ir", "op": "InvertedResidual", "inputs": ["image"], "attrs": {"filters": 8}}])"));
        auto wg = modelGraph(wrong);
        QVERIFY(wg.ok());
        auto wm = ops::analyzeModel(*wg);
        QVERIFY(!wm.ok());
        QVERIFY2(wm.error().toString().find("ir/add") != std::string::npos, wm.error().toString().c_str());
    }

    // The Transformer encoder from the library in a small sequence classifier: Embedding,
    // TransformerEncoder (self-attention: both inputs of its MultiHeadAttention read the layer's
    // input), GlobalAveragePooling1D (the mean over the positions) and a softmax Dense. It expands into the documented nodes with Keras-named
    // attention weights, trains on the CPU with its loss falling, and refuses an input whose
    // features differ from embed_dim at the residual Add.
    void bundledTransformerEncoder() {
        const std::string nodes = R"([
          {"name": "tokens", "op": "Input", "attrs": {"shape": [8], "dtype": "int32"}},
          {"name": "embed", "op": "Embedding", "inputs": ["tokens"], "attrs": {"input_dim": 10, "output_dim": 16}},
          {"name": "encoder", "op": "TransformerEncoder", "inputs": ["embed"],
           "attrs": {"num_heads": 2, "key_dim": 8, "ff_dim": 32, "dropout": 0.1, "embed_dim": 16}},
          {"name": "pool", "op": "GlobalAveragePooling1D", "inputs": ["encoder"]},
          {"name": "probs", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 2, "activation": "softmax"}}])";
        Graph g = expanded(projectText("", nodes));
        QCOMPARE(names(g), (std::vector<std::string>{"tokens", "embed", "encoder/attention", "encoder/attention_dropout",
                                                     "encoder/attention_add", "encoder/attention_norm", "encoder/ff_hidden",
                                                     "encoder/ff_output", "encoder/ff_dropout", "encoder/ff_add",
                                                     "encoder/ff_norm", "pool", "probs"}));
        QCOMPARE(g.node("encoder/attention")->inputs, (std::vector<std::string>{"embed", "embed"}));
        QCOMPARE(g.node("encoder/ff_hidden")->attrs.getString("activation"), std::string("relu"));
        QCOMPARE(g.node("encoder/ff_dropout")->attrs.getFloat("rate"), 0.1);
        auto m = ops::analyzeModel(g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->info("encoder/attention").output, (Shape{-1, 8, 16}));
        QCOMPARE(m->info("encoder/ff_hidden").output, (Shape{-1, 8, 32}));
        QCOMPARE(m->info("encoder/ff_norm").output, (Shape{-1, 8, 16}));
        QCOMPARE(m->info("pool").output, (Shape{-1, 16}));
        exec::ParamStore params = exec::ParamStore::create(*m, 3);
        std::set<std::string> pnames;
        for (const auto& q : params.params())
            if (q.name.starts_with("encoder/attention/")) pnames.insert(q.name);
        QCOMPARE(pnames, (std::set<std::string>{"encoder/attention/query/kernel", "encoder/attention/query/bias",
                                                "encoder/attention/key/kernel", "encoder/attention/key/bias",
                                                "encoder/attention/value/kernel", "encoder/attention/value/bias",
                                                "encoder/attention/attention_output/kernel",
                                                "encoder/attention/attention_output/bias"}));

        const char* config = R"({"epochs": 8, "batch_size": 16, "seed": 7,
            "optimizer": {"type": "adam", "learning_rate": 0.005},
            "loss": {"type": "SparseCategoricalCrossentropy"}})";
        TrainRun run = trainGraph(g, sequences(128, 1), config);
        QCOMPARE(run.stepLosses.size(), size_t{64});  // 8 epochs of 128 / 16
        double first = 0, last = 0;
        for (size_t i = 0; i < 8; ++i) {
            first += run.stepLosses[i] / 8;
            last += run.stepLosses[56 + i] / 8;
        }
        qInfo("Transformer encoder classifier: mean loss %.4f in epoch 1, %.4f in epoch 8", first, last);
        QVERIFY2(std::isfinite(last) && last < 0.7 * first, qPrintable(QString("%1 -> %2").arg(first).arg(last)));

        Error e = expansionError("", R"([
          {"name": "tokens", "op": "Input", "attrs": {"shape": [8], "dtype": "int32"}},
          {"name": "embed", "op": "Embedding", "inputs": ["tokens"], "attrs": {"input_dim": 10, "output_dim": 12}},
          {"name": "encoder", "op": "TransformerEncoder", "inputs": ["embed"], "attrs": {"embed_dim": 16}}])");
        QVERIFY2(e.toString().find("encoder/ff_add") != std::string::npos, e.toString().c_str());
    }

    // Squeeze-and-excitation from the library: the global average, a ReLU bottleneck and a sigmoid
    // give per-channel weights that scale the input through Multiply's broadcast. A network with it
    // trains (its loss falls and the excitation's weights move, so gradients reach them through the
    // broadcast) and exports to ONNX with the same outputs.
    void bundledSqueezeExcitation() {
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "stem", "op": "ConvBNReLU", "inputs": ["image"], "attrs": {"filters": 8}},
          {"name": "se", "op": "SqueezeExcitation", "inputs": ["stem"], "attrs": {"filters": 8, "reduced_filters": 2}},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["se"]},
          {"name": "logits", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 2}}])";
        Graph g = expanded(projectText("", nodes));
        QCOMPARE(names(g), (std::vector<std::string>{"image", "stem/conv", "stem/bn", "stem/relu", "se/squeeze", "se/reduce",
                                                     "se/excite", "se/scale", "pool", "logits"}));
        QCOMPARE(g.node("se/scale")->op, std::string("Multiply"));
        QCOMPARE(g.node("se/scale")->inputs, (std::vector<std::string>{"stem/relu", "se/excite"}));
        QCOMPARE(g.node("se/reduce")->attrs.getString("activation"), std::string("relu"));
        QCOMPARE(g.node("se/excite")->attrs.getString("activation"), std::string("sigmoid"));
        auto m = ops::analyzeModel(g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->info("se/squeeze").output, (Shape{-1, 8}));
        QCOMPARE(m->info("se/reduce").output, (Shape{-1, 2}));
        QCOMPARE(m->info("se/excite").output, (Shape{-1, 8}));
        QCOMPARE(m->info("se/scale").output, (Shape{-1, 6, 6, 8}));
        exec::ParamStore params = exec::ParamStore::create(*m, 3);
        std::set<std::string> pnames;
        for (const auto& q : params.params())
            if (q.name.starts_with("se/")) pnames.insert(q.name);
        QCOMPARE(pnames, (std::set<std::string>{"se/reduce/kernel", "se/reduce/bias", "se/excite/kernel", "se/excite/bias"}));

        // Training: the mean loss of the last epoch is well below the first's, and the
        // excitation's weights after 6 epochs differ from those after 1.
        const char* config = R"({"epochs": %1, "batch_size": 16, "seed": 7,
            "optimizer": {"type": "adam", "learning_rate": 0.01},
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})";
        const std::string six = QString::fromLatin1(config).arg(6).toStdString();
        const std::string one = QString::fromLatin1(config).arg(1).toStdString();
        TrainRun run = trainGraph(g, images(64, 1), six.c_str());
        QCOMPARE(run.stepLosses.size(), size_t{24});  // 6 epochs of 64 / 16
        double first = 0, last = 0;
        for (size_t i = 0; i < 4; ++i) {
            first += run.stepLosses[i] / 4;
            last += run.stepLosses[20 + i] / 4;
        }
        qInfo("squeeze-and-excitation network: mean loss %.4f in epoch 1, %.4f in epoch 6", first, last);
        QVERIFY2(std::isfinite(last) && last < 0.8 * first, qPrintable(QString("%1 -> %2").arg(first).arg(last)));
        TrainRun early = trainGraph(g, images(64, 1), one.c_str());
        auto weightsOf = [](const TrainRun& r, const std::string& name) {
            for (const auto& [n, v] : r.weights)
                if (n == name) return v;
            return std::vector<float>{};
        };
        for (const char* name : {"se/reduce/kernel", "se/excite/kernel", "se/excite/bias"}) {
            const auto a = weightsOf(early, name), b = weightsOf(run, name);
            QVERIFY2(!a.empty() && a.size() == b.size(), name);
            QVERIFY2(a != b, name);
        }

        // ONNX: the exported model computes what Kiln computes, with the trained weights.
        for (auto& p : params.params()) {
            const auto v = weightsOf(run, p.name);
            QVERIFY2(v.size() == static_cast<size_t>(p.value.numel()), p.name.c_str());
            std::copy(v.begin(), v.end(), p.value.data<float>());
        }
        auto bytes = exportOnnx(*m, params, ModelMetadata{"se", {}, "{}", "0.1.0"});
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        ThreadPool pool(2);
        auto r = checkOnnxParity(*m, params, *bytes, syntheticInputs(*m, 4, 5), pool);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY2(r->passed, std::to_string(r->maxAbsDiff).c_str());
        auto back = importOnnx(*bytes);
        QVERIFY(back.ok());
        std::set<std::string> inFile;
        for (const auto& w : back->weights) inFile.insert(w.name);
        QVERIFY(inFile.count("se/excite/kernel"));
        QVERIFY(inFile.count("se/reduce/bias"));

        // The scale needs `filters` channels in: another width is refused at the multiply.
        Error e = expansionError("", std::string("[") + kImage + R"(,
          {"name": "se", "op": "SqueezeExcitation", "inputs": ["image"], "attrs": {"filters": 8}}])");
        QVERIFY2(e.toString().find("se/scale") != std::string::npos, e.toString().c_str());
    }

    // The two-tower model of the library: two inputs, a Dense tower each, Concatenate and a Dense
    // head, with the attributes' defaults and values, readable weight names, the input count
    // checked, and training that matches the nodes the studio's former two-tower template
    // inserted (written out flat under the instance's name).
    void bundledTwoTower() {
        const std::string inputs = R"({"name": "tower_a", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "tower_b", "op": "Input", "attrs": {"shape": [4]}})";
        const std::string composite = "[" + inputs + R"(,
          {"name": "tt", "op": "TwoTower", "inputs": ["tower_a", "tower_b"], "attrs": {"units": 8}}])";
        Graph g = expanded(projectText("", composite));
        QCOMPARE(names(g), (std::vector<std::string>{"tower_a", "tower_b", "tt/dense_a", "tt/dense_b", "tt/concat", "tt/head"}));
        QCOMPARE(g.node("tt/dense_b")->inputs, (std::vector<std::string>{"tower_b"}));
        QCOMPARE(g.node("tt/concat")->inputs, (std::vector<std::string>{"tt/dense_a", "tt/dense_b"}));
        QCOMPARE(g.node("tt/dense_a")->attrs.getString("activation"), std::string("relu"));  // the default
        QCOMPARE(g.node("tt/head")->attrs.getInt("units"), int64_t{1});
        QCOMPARE(g.node("tt/head")->attrs.getString("activation"), std::string("linear"));
        auto m = ops::analyzeModel(g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->info("tt/concat").output, (Shape{-1, 16}));
        QCOMPARE(m->info("tt/head").output, (Shape{-1, 1}));
        exec::ParamStore params = exec::ParamStore::create(*m, 1);
        std::set<std::string> pnames;
        for (const auto& q : params.params()) pnames.insert(q.name);
        QCOMPARE(pnames, (std::set<std::string>{"tt/dense_a/kernel", "tt/dense_a/bias", "tt/dense_b/kernel", "tt/dense_b/bias",
                                                "tt/head/kernel", "tt/head/bias"}));
        // Instance values reach the nodes.
        Graph tanh = expanded(projectText("", "[" + inputs + R"(,
          {"name": "tt", "op": "TwoTower", "inputs": ["tower_a", "tower_b"],
           "attrs": {"activation": "tanh", "head_units": 3, "head_activation": "softmax"}}])"));
        QCOMPARE(tanh.node("tt/dense_a")->attrs.getInt("units"), int64_t{64});
        QCOMPARE(tanh.node("tt/dense_b")->attrs.getString("activation"), std::string("tanh"));
        QCOMPARE(tanh.node("tt/head")->attrs.getInt("units"), int64_t{3});
        QCOMPARE(tanh.node("tt/head")->attrs.getString("activation"), std::string("softmax"));

        // The same network as the template's nodes, flat, trains to the same numbers.
        const std::string flat = "[" + inputs + R"(,
          {"name": "tt/dense_a", "op": "Dense", "inputs": ["tower_a"], "attrs": {"units": 8, "activation": "relu"}},
          {"name": "tt/dense_b", "op": "Dense", "inputs": ["tower_b"], "attrs": {"units": 8, "activation": "relu"}},
          {"name": "tt/concat", "op": "Concatenate", "inputs": ["tt/dense_a", "tt/dense_b"]},
          {"name": "tt/head", "op": "Dense", "inputs": ["tt/concat"], "attrs": {"units": 1}}])";
        const char* config = R"({"epochs": 2, "batch_size": 16, "seed": 7,
            "optimizer": {"type": "adam", "learning_rate": 0.01},
            "loss": {"type": "BinaryCrossentropy", "from_logits": true}})";
        TrainRun a = trainGraph(g, towers(64, 3), config);
        TrainRun b = trainGraph(expanded(projectText("", flat)), towers(64, 3), config);
        QCOMPARE(a.stepLosses.size(), size_t{8});
        QVERIFY(a.stepLosses.back() != a.stepLosses.front());
        for (size_t i = 0; i < a.stepLosses.size(); ++i) QCOMPARE(a.stepLosses[i], b.stepLosses[i]);
        QCOMPARE(a.weights.size(), b.weights.size());
        for (size_t i = 0; i < a.weights.size(); ++i) {
            QCOMPARE(a.weights[i].first, b.weights[i].first);
            QVERIFY2(a.weights[i].second == b.weights[i].second, a.weights[i].first.c_str());
        }

        // Both towers must be fed.
        Error e = expansionError("", "[" + inputs + R"(, {"name": "tt", "op": "TwoTower", "inputs": ["tower_a"]}])");
        QVERIFY2(e.toString().find("TwoTower \"tt\" takes 2 input(s) (a, b) but has 1") != std::string::npos,
                 e.toString().c_str());
    }

    // A project saved with the studio's former two-tower template holds plain nodes: it reads,
    // analyses and writes back as before, and its weights keep their names.
    void templateProjectsStayFlat() {
        const std::string text = projectText("", R"([
          {"name": "tower_a", "op": "Input", "attrs": {"shape": [16]}},
          {"name": "dense_a", "op": "Dense", "inputs": ["tower_a"], "attrs": {"units": 64, "activation": "relu"}},
          {"name": "tower_b", "op": "Input", "attrs": {"shape": [16]}},
          {"name": "dense_b", "op": "Dense", "inputs": ["tower_b"], "attrs": {"units": 64, "activation": "relu"}},
          {"name": "concat", "op": "Concatenate", "inputs": ["dense_a", "dense_b"]},
          {"name": "head", "op": "Dense", "inputs": ["concat"], "attrs": {"units": 1}}])");
        Project p = parsed(text);
        QVERIFY(p.layers.empty());
        Graph g = expanded(text);
        QCOMPARE(names(g), (std::vector<std::string>{"tower_a", "dense_a", "tower_b", "dense_b", "concat", "head"}));
        for (size_t i = 0; i < g.nodes.size(); ++i) {  // nothing to expand
            QCOMPARE(g.nodes[i].op, p.graph.nodes[i].op);
            QCOMPARE(g.nodes[i].inputs, p.graph.nodes[i].inputs);
            QCOMPARE(g.nodes[i].attrs, p.graph.nodes[i].attrs);
        }
        auto m = ops::analyzeModel(g);
        QVERIFY(m.ok());
        QCOMPARE(m->info("head").output, (Shape{-1, 1}));
        exec::ParamStore params = exec::ParamStore::create(*m, 1);
        std::set<std::string> pnames;
        for (const auto& q : params.params()) pnames.insert(q.name);
        QCOMPARE(pnames, (std::set<std::string>{"dense_a/kernel", "dense_a/bias", "dense_b/kernel", "dense_b/bias",
                                                "head/kernel", "head/bias"}));
        QCOMPARE(serializeProject(parsed(serializeProject(p))), serializeProject(p));
        QVERIFY(!json::parse(serializeProject(p)).contains("layers"));
    }

    void projectLayerReplacesBundledOne() {
        const std::string layers = R"([{"name": "ConvBNReLU", "inputs": ["x"], "outputs": ["f"],
            "nodes": [{"name": "f", "op": "Flatten", "inputs": ["x"]}]}])";
        Graph g = expanded(projectText(layers, std::string("[") + kImage + R"(, {"name": "c", "op": "ConvBNReLU", "inputs": ["image"]}])"));
        QCOMPARE(names(g), (std::vector<std::string>{"image", "c/f"}));
    }

    void nestedLayers() {
        const std::string layers = R"([
          {"name": "Pair", "inputs": ["in"], "outputs": ["second"],
           "attributes": [{"name": "width", "type": "int", "default": 2, "min": 1}],
           "nodes": [
             {"name": "first", "op": "ConvBNReLU", "inputs": ["in"], "attrs": {"filters": {"$attr": "width"}, "kernel_size": 1}},
             {"name": "second", "op": "ConvBNReLU", "inputs": ["first"], "attrs": {"filters": {"$attr": "width"}}}]},
          {"name": "Tower", "inputs": ["x"], "outputs": ["top"],
           "attributes": [{"name": "width", "type": "int", "default": 3}],
           "nodes": [
             {"name": "p", "op": "Pair", "inputs": ["x"], "attrs": {"width": {"$attr": "width"}}},
             {"name": "top", "op": "MaxPooling2D", "inputs": ["p"]}]}])";
        const std::string nodes = std::string("[") + kImage + R"(, {"name": "t", "op": "Tower", "inputs": ["image"], "attrs": {"width": 5}}])";
        Graph g = expanded(projectText(layers, nodes));
        QCOMPARE(names(g), (std::vector<std::string>{"image", "t/p/first/conv", "t/p/first/bn", "t/p/first/relu", "t/p/second/conv",
                                                      "t/p/second/bn", "t/p/second/relu", "t/top"}));
        QCOMPARE(g.node("t/p/first/conv")->attrs.getInt("filters"), int64_t{5});
        QCOMPARE(g.node("t/p/first/conv")->attrs.getInt("kernel_size"), int64_t{1});
        QCOMPARE(g.node("t/p/second/conv")->attrs.getInt("kernel_size"), int64_t{3});
        QCOMPARE(g.node("t/p/second/conv")->inputs, std::vector<std::string>{"t/p/first/relu"});
        QCOMPARE(g.node("t/top")->inputs, std::vector<std::string>{"t/p/second/relu"});
        QVERIFY(ops::analyzeModel(g).ok());
    }

    void recursionIsReportedWithTheChain_data() {
        QTest::addColumn<QString>("layers");
        QTest::addColumn<QString>("chain");
        QTest::newRow("self") << R"([{"name": "A", "inputs": ["x"], "outputs": ["a"],
            "nodes": [{"name": "a", "op": "A", "inputs": ["x"]}]}])" << "A -> A";
        QTest::newRow("through others") << R"([
            {"name": "A", "inputs": ["x"], "outputs": ["b"], "nodes": [{"name": "b", "op": "B", "inputs": ["x"]}]},
            {"name": "B", "inputs": ["x"], "outputs": ["c"], "nodes": [{"name": "c", "op": "C", "inputs": ["x"]}]},
            {"name": "C", "inputs": ["x"], "outputs": ["a"], "nodes": [{"name": "a", "op": "A", "inputs": ["x"]}]}])"
                                        << "A -> B -> C -> A";
    }
    void recursionIsReportedWithTheChain() {
        QFETCH(QString, layers);
        QFETCH(QString, chain);
        auto p = parseProject(projectText(layers.toStdString(), std::string("[") + kImage + "]"), "layers.kiln");
        QVERIFY(!p.ok());
        QCOMPARE(p.error().code, ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(p.error().param("chain")), chain);
        QVERIFY2(p.error().message.find(chain.toStdString()) != std::string::npos, p.error().message.c_str());
        QCOMPARE(p.error().file, std::string("layers.kiln"));
        QVERIFY(p.error().line > 0);  // the line of the layer holding the offending node
    }

    void badInstanceAttributes_data() {
        QTest::addColumn<QString>("attrs");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("attribute");
        QTest::addColumn<QString>("words");
        QTest::newRow("unknown") << R"({"filtrs": 8})" << int(ErrorCode::UnknownAttribute) << "filtrs" << "its attributes: filters, kernel, act_kind";
        QTest::newRow("type") << R"({"filters": "many"})" << int(ErrorCode::BadAttribute) << "filters" << "must be an integer";
        QTest::newRow("below min") << R"({"filters": 0})" << int(ErrorCode::BadAttribute) << "filters" << "must be at least 1";
        QTest::newRow("above max") << R"({"filters": 1000})" << int(ErrorCode::BadAttribute) << "filters" << "must be at most 512";
        QTest::newRow("choice") << R"({"act_kind": "elu"})" << int(ErrorCode::BadAttribute) << "act_kind" << "must be one of relu, tanh";
    }
    void badInstanceAttributes() {
        QFETCH(QString, attrs);
        QFETCH(int, code);
        QFETCH(QString, attribute);
        QFETCH(QString, words);
        Error e = expansionError(kBlockLayer, std::string("[") + kImage + R"(, {"name": "block1", "op": "Block", "inputs": ["image"], "attrs": )" +
                                                  attrs.toStdString() + "}]");
        QCOMPARE(int(e.code), code);
        QCOMPARE(e.node, std::string("block1"));
        QCOMPARE(QString::fromStdString(e.param("attribute")), attribute);
        QVERIFY2(e.message.find(words.toStdString()) != std::string::npos, e.message.c_str());
        QCOMPARE(e.file, std::string("layers.kiln"));
        QCOMPARE(e.line, 17);  // the instance's line in the file (the graph follows the layer)
    }

    void requiredAttributeMustBeSet() {
        const std::string layers = R"([{"name": "D", "inputs": ["x"], "outputs": ["d"],
            "attributes": [{"name": "units", "type": "int"}],
            "nodes": [{"name": "d", "op": "Dense", "inputs": ["x"], "attrs": {"units": {"$attr": "units"}}}]}])";
        Error e = expansionError(layers, R"([{"name": "x", "op": "Input", "attrs": {"shape": [3]}}, {"name": "h", "op": "D", "inputs": ["x"]}])");
        QCOMPARE(e.code, ErrorCode::BadAttribute);
        QCOMPARE(e.node, std::string("h"));
        QCOMPARE(e.param("attribute"), std::string("units"));
    }

    void innerOpErrorsNameTheExpandedNode() {
        // The layer passes a value that its Conv2D refuses: the error names "b/conv".
        const std::string layers = R"([{"name": "P", "inputs": ["x"], "outputs": ["conv"],
            "attributes": [{"name": "pad", "type": "string", "default": "same"}],
            "nodes": [{"name": "conv", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 2, "padding": {"$attr": "pad"}}}]}])";
        Error e = expansionError(layers, std::string("[") + kImage + R"(, {"name": "b", "op": "P", "inputs": ["image"], "attrs": {"pad": "full"}}])");
        QCOMPARE(e.code, ErrorCode::BadAttribute);
        QCOMPARE(e.node, std::string("b/conv"));
        QCOMPARE(e.param("attribute"), std::string("padding"));
    }

    void missingInputs() {
        Error e = expansionError(kBlockLayer, std::string("[") + kImage + R"(, {"name": "block1", "op": "Block"}])");
        QCOMPARE(e.code, ErrorCode::ArityMismatch);
        QCOMPARE(e.node, std::string("block1"));
        QCOMPARE(e.param("expected"), std::string("1"));
        QCOMPARE(e.param("got"), std::string("0"));
        QVERIFY2(e.message.find("(x)") != std::string::npos, e.message.c_str());
    }

    void severalOutputs() {
        const std::string layers = R"([{"name": "Split", "inputs": ["x"], "outputs": ["wide", "narrow"],
            "nodes": [{"name": "wide", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
                      {"name": "narrow", "op": "Dense", "inputs": ["x"], "attrs": {"units": 2}}]}])";
        const std::string input = R"({"name": "x", "op": "Input", "attrs": {"shape": [3]}})";
        Graph g = expanded(projectText(layers, "[" + input + R"(, {"name": "s", "op": "Split", "inputs": ["x"]},
            {"name": "cat", "op": "Concatenate", "inputs": ["s:narrow", "s:wide"]}])", R"(["cat", "s:wide"])"));
        QCOMPARE(g.node("cat")->inputs, (std::vector<std::string>{"s/narrow", "s/wide"}));
        QCOMPARE(g.outputs, (std::vector<std::string>{"cat", "s/wide"}));
        QVERIFY(ops::analyzeModel(g).ok());

        // The bare instance name is ambiguous; the error lists the choices.
        Error e = expansionError(layers, "[" + input + R"(, {"name": "s", "op": "Split", "inputs": ["x"]},
            {"name": "d", "op": "Dense", "inputs": ["s"], "attrs": {"units": 1}}])");
        QCOMPARE(e.code, ErrorCode::DanglingInput);
        QCOMPARE(e.node, std::string("d"));
        QVERIFY2(e.message.find("\"s:wide\", \"s:narrow\"") != std::string::npos, e.message.c_str());
        Error port = expansionError(layers, "[" + input + R"(, {"name": "s", "op": "Split", "inputs": ["x"]},
            {"name": "d", "op": "Dense", "inputs": ["s:middle"], "attrs": {"units": 1}}])");
        QCOMPARE(port.code, ErrorCode::DanglingInput);
        QVERIFY2(port.message.find("no output \"middle\"") != std::string::npos, port.message.c_str());
    }

    void sharedWeightsBetweenInstances() {
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "left", "op": "Block", "inputs": ["image"]},
          {"name": "right", "op": "Block", "inputs": ["image"], "share_weights_with": "left"},
          {"name": "sum", "op": "Add", "inputs": ["left", "right"]}])";
        Graph g = expanded(projectText(kBlockLayer, nodes));
        QCOMPARE(g.node("right/conv")->shareWeightsWith, std::string("left/conv"));
        QCOMPARE(g.node("right/bn")->shareWeightsWith, std::string("left/bn"));
        QCOMPARE(g.node("right/act")->shareWeightsWith, std::string());  // no parameters to share
        auto m = ops::analyzeModel(g);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->info("right/conv").paramOwner, g.find("left/conv"));
        exec::ParamStore params = exec::ParamStore::create(*m, 1);
        for (const auto& p : params.params()) QVERIFY2(p.name.rfind("left/", 0) == 0, p.name.c_str());

        // Without the request, each instance keeps its own weights.
        Graph own = expanded(projectText(kBlockLayer, std::string("[") + kImage + R"(,
          {"name": "left", "op": "Block", "inputs": ["image"]}, {"name": "right", "op": "Block", "inputs": ["image"]}])"));
        auto mo = ops::analyzeModel(own);
        QVERIFY(mo.ok());
        QCOMPARE(mo->parameterCount(true), 2 * m->parameterCount(true));

        Error e = expansionError(kBlockLayer, std::string("[") + kImage + R"(,
          {"name": "left", "op": "Block", "inputs": ["image"]},
          {"name": "c", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 4}},
          {"name": "right", "op": "Block", "inputs": ["left"], "share_weights_with": "c"}])");
        QCOMPARE(e.code, ErrorCode::BadAttribute);
        QCOMPARE(e.node, std::string("right"));
        QCOMPARE(e.param("attribute"), std::string("share_weights_with"));
    }

    void instanceSettingsApplyToItsNodes() {
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "b", "op": "Block", "inputs": ["image"], "trainable": false, "lr_multiplier": 0.5}])";
        Graph g = expanded(projectText(kBlockLayer, nodes));
        for (const auto& n : {"b/conv", "b/bn", "b/act"}) {
            QVERIFY(!g.node(n)->trainable);
            QCOMPARE(g.node(n)->lrMultiplier, 0.5);
        }
    }

    void nameClashIsReported() {
        Error e = expansionError(kBlockLayer, std::string("[") + kImage + R"(,
          {"name": "b", "op": "Block", "inputs": ["image"]}, {"name": "b/conv", "op": "ReLU", "inputs": ["image"]}])");
        QCOMPARE(e.code, ErrorCode::DuplicateNode);
        QCOMPARE(e.node, std::string("b/conv"));
    }

    void definitionErrorsNameTheField_data() {
        QTest::addColumn<QString>("layers");
        QTest::addColumn<QString>("field");
        QTest::newRow("builtin name") << R"([{"name": "Dense", "inputs": ["x"], "outputs": ["r"], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]}])"
                                      << "layers[0].name";
        QTest::newRow("unknown $attr") << R"([{"name": "L", "inputs": ["x"], "outputs": ["d"],
            "nodes": [{"name": "d", "op": "Dense", "inputs": ["x"], "attrs": {"units": {"$attr": "size"}}}]}])" << "layers[0].nodes[0].attrs.units";
        QTest::newRow("unknown input") << R"([{"name": "L", "inputs": ["x"], "outputs": ["r"], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["y"]}]}])"
                                       << "layers[0].nodes[0].inputs";
        QTest::newRow("missing output") << R"([{"name": "L", "inputs": ["x"], "outputs": ["q"], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]}])"
                                        << "layers[0].outputs";
        QTest::newRow("bad default") << R"([{"name": "L", "inputs": ["x"], "outputs": ["r"],
            "attributes": [{"name": "n", "type": "int", "default": 0, "min": 1}], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]}])"
                                     << "layers[0].attributes[0].default";
        QTest::newRow("bad type") << R"([{"name": "L", "inputs": ["x"], "outputs": ["r"],
            "attributes": [{"name": "n", "type": "integer"}], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]}])"
                                  << "layers[0].attributes[0].type";
        QTest::newRow("misspelt setting") << R"([{"name": "L", "input": ["x"], "outputs": ["r"], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]}])"
                                          << "layers[0].input";
        QTest::newRow("Input inside") << R"([{"name": "L", "inputs": ["x"], "outputs": ["r"], "nodes": [{"name": "r", "op": "Input"}]}])"
                                      << "layers[0].nodes[0].op";
        QTest::newRow("twice") << R"([{"name": "L", "inputs": ["x"], "outputs": ["r"], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]},
                                     {"name": "L", "inputs": ["x"], "outputs": ["r"], "nodes": [{"name": "r", "op": "ReLU", "inputs": ["x"]}]}])"
                               << "layers[1].name";
        QTest::newRow("wrong input count of inner layer") << R"([{"name": "L", "inputs": ["x"], "outputs": ["r"],
            "nodes": [{"name": "r", "op": "ConvBNReLU", "inputs": ["x", "x"]}]}])" << "nodes \"r\" inputs";
    }
    void definitionErrorsNameTheField() {
        QFETCH(QString, layers);
        QFETCH(QString, field);
        auto p = parseProject(projectText(layers.toStdString(), std::string("[") + kImage + "]"), "layers.kiln");
        QVERIFY(!p.ok());
        QCOMPARE(p.error().code, ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(p.error().param("field")), field);
        QCOMPARE(p.error().file, std::string("layers.kiln"));
    }

    // A hostile file cannot exhaust the stack or the memory: nesting depth and the expanded size
    // are bounded, with an error instead of a crash.
    void nestingAndSizeAreBounded() {
        json deep = json::array();
        for (int i = 0; i < 100; ++i) {
            std::string inner = i == 99 ? "ReLU" : "L" + std::to_string(i + 1);
            deep.push_back({{"name", "L" + std::to_string(i)}, {"inputs", {"x"}}, {"outputs", {"n"}},
                            {"nodes", {{{"name", "n"}, {"op", inner}, {"inputs", {"x"}}}}}});
        }
        auto p = parseProject(projectText(deep.dump(), std::string("[") + kImage + "]"), "layers.kiln");
        QVERIFY(!p.ok());
        QVERIFY2(p.error().message.find("nest more than 64 deep") != std::string::npos, p.error().message.c_str());

        // Six levels of ten instances each would be a million nodes.
        json wide = json::array();
        for (int i = 0; i < 6; ++i) {
            std::string inner = i == 5 ? "ReLU" : "W" + std::to_string(i + 1);
            json nodes = json::array();
            for (int k = 0; k < 10; ++k)
                nodes.push_back({{"name", "n" + std::to_string(k)}, {"op", inner}, {"inputs", {"x"}}});
            wide.push_back({{"name", "W" + std::to_string(i)}, {"inputs", {"x"}}, {"outputs", {"n0"}}, {"nodes", nodes}});
        }
        Error e = expansionError(wide.dump(), std::string("[") + kImage + R"(, {"name": "w", "op": "W0", "inputs": ["image"]}])");
        QCOMPARE(e.code, ErrorCode::Unsupported);
        QVERIFY2(e.message.find("more than 200000 nodes") != std::string::npos, e.message.c_str());
    }

    void roundTripKeepsDefinitions() {
        const std::string nodes = std::string("[") + kImage + R"(, {"name": "b", "op": "Block", "inputs": ["image"], "attrs": {"filters": 6}}])";
        Project p = parsed(projectText(kBlockLayer, nodes));
        QCOMPARE(p.layers.size(), size_t{1});
        QCOMPARE(p.graph.nodes[1].op, std::string("Block"));  // the graph keeps the instance
        const std::string text = serializeProject(p);
        json doc = json::parse(text);
        QCOMPARE(doc["layers"][0]["nodes"][0]["attrs"]["filters"], json({{"$attr", "filters"}}));
        QCOMPARE(doc["layers"][0]["attributes"][0]["max"].get<double>(), 512.0);
        Project back = parsed(text);
        QCOMPARE(serializeProject(back), text);
        auto a = modelGraph(p);
        auto b = modelGraph(back);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(names(*a), names(*b));
        QCOMPARE(a->node("b/conv")->attrs, b->node("b/conv")->attrs);
    }

    // The same network written with layers and written out flat trains to the same numbers.
    void trainsLikeTheFlatNetwork() {
        const std::string composite = std::string("[") + kImage + R"(,
          {"name": "stem", "op": "ConvBNReLU", "inputs": ["image"], "attrs": {"filters": 4}},
          {"name": "block1", "op": "ResidualBlock", "inputs": ["stem"], "attrs": {"filters": 4}},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["block1"]},
          {"name": "logits", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 2}}])";
        const std::string flat = std::string("[") + kImage + R"(,
          {"name": "stem/conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 4, "kernel_size": 3, "padding": "same", "use_bias": false}},
          {"name": "stem/bn", "op": "BatchNormalization", "inputs": ["stem/conv"]},
          {"name": "stem/relu", "op": "ReLU", "inputs": ["stem/bn"]},
          {"name": "block1/conv1", "op": "Conv2D", "inputs": ["stem/relu"], "attrs": {"filters": 4, "padding": "same", "use_bias": false}},
          {"name": "block1/bn1", "op": "BatchNormalization", "inputs": ["block1/conv1"]},
          {"name": "block1/relu1", "op": "ReLU", "inputs": ["block1/bn1"]},
          {"name": "block1/conv2", "op": "Conv2D", "inputs": ["block1/relu1"], "attrs": {"filters": 4, "padding": "same", "use_bias": false}},
          {"name": "block1/bn2", "op": "BatchNormalization", "inputs": ["block1/conv2"]},
          {"name": "block1/add", "op": "Add", "inputs": ["block1/bn2", "stem/relu"]},
          {"name": "block1/relu2", "op": "ReLU", "inputs": ["block1/add"]},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["block1/relu2"]},
          {"name": "logits", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 2}}])";
        TrainRun a = trainGraph(expanded(projectText("", composite)));
        TrainRun b = trainGraph(expanded(projectText("", flat)));
        QCOMPARE(a.stepLosses.size(), size_t{8});  // 2 epochs of 64 / 16
        QVERIFY(a.stepLosses.back() != a.stepLosses.front());
        for (size_t i = 0; i < a.stepLosses.size(); ++i) QCOMPARE(a.stepLosses[i], b.stepLosses[i]);  // bit-identical
        QCOMPARE(a.weights.size(), b.weights.size());
        for (size_t i = 0; i < a.weights.size(); ++i) {
            QCOMPARE(a.weights[i].first, b.weights[i].first);
            QVERIFY2(a.weights[i].second == b.weights[i].second, a.weights[i].first.c_str());
        }
    }

    void exportsToOnnx() {
        const std::string nodes = std::string("[") + kImage + R"(,
          {"name": "stem", "op": "ConvBNReLU", "inputs": ["image"], "attrs": {"filters": 4}},
          {"name": "block1", "op": "ResidualBlock", "inputs": ["stem"], "attrs": {"filters": 4}},
          {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["block1"]},
          {"name": "logits", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 3}}])";
        auto m = ops::analyzeModel(expanded(projectText("", nodes)));
        QVERIFY(m.ok());
        exec::ParamStore params = exec::ParamStore::create(*m, 3);
        // Non-trivial batch-norm statistics, so that the exported inference form is exercised.
        for (auto& p : params.params()) {
            if (!p.name.ends_with("moving_variance") && !p.name.ends_with("moving_mean")) continue;
            float* d = p.value.data<float>();
            for (int64_t e = 0; e < p.value.numel(); ++e)
                d[e] = (p.name.ends_with("variance") ? 0.5f : -0.5f) + rng::uniform(9, 1, static_cast<uint64_t>(e));
        }
        auto bytes = exportOnnx(*m, params, ModelMetadata{"composite", {}, "{}", "0.1.0"});
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        ThreadPool pool(2);
        auto r = checkOnnxParity(*m, params, *bytes, syntheticInputs(*m, 4, 5), pool);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY2(r->passed, std::to_string(r->maxAbsDiff).c_str());
        // The weights keep their expanded names in the ONNX file.
        auto back = importOnnx(*bytes);
        QVERIFY(back.ok());
        std::set<std::string> inFile;
        for (const auto& w : back->weights) inFile.insert(w.name);
        QVERIFY(inFile.count("block1/conv2/kernel"));
        QVERIFY(inFile.count("stem/bn/moving_mean"));
    }
};

QTEST_GUILESS_MAIN(TestLayers)
#include "tst_layers.moc"
