// SPDX-License-Identifier: Apache-2.0
// kiln-import end to end: a Kiln model exported to ONNX and imported back gives the same outputs
// with readable names, a layout and a complete report; bad files exit 2 naming the file and the
// ONNX node and write nothing; unsupported operations become Placeholder nodes that survive
// save/load and make training, running and export refuse, naming each of them. Keras files
// (.keras and legacy .h5, made by Keras when the Python environment has it) go the same way, a
// Bidirectional(LSTM) a placeholder whose weights the report lists, and .h5 files on which the HDF5
// library crashes or runs without end stop with exit 2 in time.
#include <QtTest>

#include <QElapsedTimer>
#include <QTemporaryDir>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/api/training_job.h"
#include "engine/core/rng.h"
#include "engine/exec/plan.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "engine/ops/plugin_registry.h"
#include "tests/app/app_test_util.h"
#include "tests/engine/io/keras_fixtures.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

std::string readText(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

void writeBytes(const QString& path, const std::string& bytes) {
    std::ofstream f(path.toStdString(), std::ios::binary);
    f << bytes;
}

Graph graphFromJson(const std::string& nodesJson, const std::string& outputs) {
    auto p = io::parseProject(R"({"format":"kiln-project","version":2,"name":"t","graph":{"nodes":)" + nodesJson +
                                  R"(,"outputs":)" + outputs + "}}",
                              "inline.kiln");
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return p->graph;
}

// A small NCHW model as other tools write it: Conv (+bias) -> Relu -> OP [-> AFTER] ->
// GlobalAveragePool -> Flatten -> Gemm, where OP is an operation Kiln does not compute and AFTER
// an optional one-input operation.
onnx::ModelProto foreignModel(const std::string& op, const std::string& domain, const std::string& after = {}) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("handmade");
    m.add_opset_import()->set_version(17);
    if (!domain.empty()) {
        auto* o = m.add_opset_import();
        o->set_domain(domain);
        o->set_version(1);
    }
    auto* g = m.mutable_graph();
    g->set_name("foreign");
    auto* in = g->add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    for (int d : {3, 6, 6}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    auto init = [&](const char* name, std::vector<int64_t> dims) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (auto d : dims) {
            t->add_dims(d);
            n *= d;
        }
        for (int64_t k = 0; k < n; ++k) t->add_float_data(std::sin(0.37f * static_cast<float>(k)));
    };
    init("W", {4, 3, 3, 3});
    init("B", {4});
    init("FC", {2, 4});
    init("FB", {2});
    auto node = [&](const char* type, std::vector<std::string> ins, const char* out, const char* name) {
        auto* n = g->add_node();
        n->set_op_type(type);
        n->set_name(name);
        for (auto& s : ins) n->add_input(s);
        n->add_output(out);
        return n;
    };
    auto* conv = node("Conv", {"x", "W", "B"}, "c", "stem_conv");
    auto* pads = conv->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int k = 0; k < 4; ++k) pads->add_ints(1);
    node("Relu", {"c"}, "r", "stem_relu");
    auto* odd = node(op.c_str(), {"r"}, "e", "mystery");
    odd->set_domain(domain);
    auto* alpha = odd->add_attribute();
    alpha->set_name("strength");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(0.5f);
    if (!after.empty()) node(after.c_str(), {"e"}, "s", "after");
    node("GlobalAveragePool", {after.empty() ? "e" : "s"}, "p", "pool");
    node("Flatten", {"p"}, "f", "flatten");
    auto* gemm = node("Gemm", {"f", "FC", "FB"}, "y", "/head/classifier/Gemm");  // as PyTorch names nodes
    auto* tb = gemm->add_attribute();
    tb->set_name("transB");
    tb->set_type(onnx::AttributeProto::INT);
    tb->set_i(1);
    auto* out = g->add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return m;
}

}  // namespace

class TestKilnImport : public QObject {
    Q_OBJECT

private slots:
    void roundTripGivesTheSameOutputs() {
        Graph g = graphFromJson(R"([
          {"name":"image","op":"Input","attrs":{"shape":[12,12,3]}},
          {"name":"stem","op":"Conv2D","inputs":["image"],"attrs":{"filters":8,"kernel_size":[3,3],"strides":[2,2],"padding":"same","activation":"relu6"}},
          {"name":"dw","op":"DepthwiseConv2D","inputs":["stem"],"attrs":{"padding":"same"}},
          {"name":"bn","op":"BatchNormalization","inputs":["dw"]},
          {"name":"act","op":"ReLU6","inputs":["bn"]},
          {"name":"skip","op":"Add","inputs":["act","stem"]},
          {"name":"gap","op":"GlobalAveragePooling2D","inputs":["skip"]},
          {"name":"logits","op":"Dense","inputs":["gap"],"attrs":{"units":5}}])",
                                R"(["logits"])");
        auto model = ops::analyzeModel(g);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 7);
        for (auto& p : params.params())  // non-trivial statistics, so that BN really runs
            if (p.name.ends_with("moving_variance") || p.name.ends_with("moving_mean"))
                for (int64_t e = 0; e < p.value.numel(); ++e)
                    p.value.data<float>()[e] = 0.5f + rng::uniform(3, std::hash<std::string>{}(p.name), e);
        auto bytes = io::exportOnnx(*model, params, {"roundtrip", {}, "{}", "test"});
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());

        QTemporaryDir tmp;
        const QString onnxPath = tmp.filePath("model.onnx"), project = tmp.filePath("imported.kiln"),
                      report = tmp.filePath("report.json");
        writeBytes(onnxPath, *bytes);
        auto run = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--report", report});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(QFile::exists(tmp.filePath("imported.safetensors")));

        auto loaded = io::loadProject(project.toStdString());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        auto back = ops::analyzeModel(loaded->graph);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        // Keras-style names, the ONNX name kept beside, and a position for every node.
        std::set<std::string> ops, names;
        for (const auto& n : loaded->graph.nodes) {
            ops.insert(n.op);
            names.insert(n.name);
            QVERIFY2(loaded->layout["nodes"].contains(n.name), n.name.c_str());
            if (n.op != "Input") QVERIFY2(n.extra.contains("onnx_node"), n.name.c_str());
        }
        QVERIFY(names.count("image"));
        QVERIFY(names.count("conv2d"));
        QVERIFY(names.count("depthwise_conv2d"));
        QVERIFY(names.count("batch_normalization"));
        QVERIFY(names.count("dense"));
        QVERIFY(ops.count("Add"));

        auto weights = io::loadSafetensors(tmp.filePath("imported.safetensors").toStdString());
        QVERIFY(weights.ok());
        auto backParams = exec::ParamStore::create(*back, 0);
        for (auto& p : backParams.params()) {
            const Tensor* t = weights->find(p.name);
            QVERIFY2(t, p.name.c_str());
            QCOMPARE(t->shape(), p.value.shape());
            p.value.copyFrom(*t);
        }
        QCOMPARE(backParams.params().size(), params.params().size());

        ThreadPool pool(2);
        exec::CompileOptions opts;
        opts.batch = 3;
        opts.training = false;
        auto a = exec::Plan::compile(*model, params, opts, pool);
        auto b = exec::Plan::compile(*back, backParams, opts, pool);
        QVERIFY(a.ok() && b.ok());
        auto inputs = io::syntheticInputs(*model, 3, 11);
        std::memcpy((*a)->input(size_t{0}), inputs[0].data<float>(), inputs[0].bytes());
        std::memcpy((*b)->input(size_t{0}), inputs[0].data<float>(), inputs[0].bytes());
        QVERIFY((*a)->forward().ok());
        QVERIFY((*b)->forward().ok());
        QCOMPARE((*b)->outputShape(0), (*a)->outputShape(0));
        double worst = 0;
        for (int64_t e = 0; e < (*a)->outputShape(0).numel(); ++e)
            worst = std::max(worst, double(std::fabs((*a)->output(0)[e] - (*b)->output(0)[e])));
        QVERIFY2(worst < 1e-5, std::to_string(worst).c_str());

        // The report: every ONNX node mapped, every weight tensor with its shape.
        const json r = json::parse(readText(report));
        QCOMPARE(r["format"].get<std::string>(), std::string("kiln-import-report"));
        onnx::ModelProto proto;
        QVERIFY(proto.ParseFromString(*bytes));
        QCOMPARE(r["nodes"].size(), size_t(proto.graph().node_size()));
        for (int k = 0; k < proto.graph().node_size(); ++k) {
            QCOMPARE(r["nodes"][k]["onnx_op"].get<std::string>(), proto.graph().node(k).op_type());
            const std::string kind = r["nodes"][k]["kind"];
            QVERIFY2(kind == "constant" || !r["nodes"][k]["kiln_nodes"].empty(), kind.c_str());
        }
        QCOMPARE(r["weight_tensors"].size(), weights->tensors.size());
        for (const auto& w : r["weight_tensors"]) {
            const Tensor* t = weights->find(w["name"]);
            QVERIFY(t);
            QCOMPARE(w["shape"].get<std::vector<int64_t>>(), t->shape().dims());
        }
        QCOMPARE(r["summary"]["placeholders"].get<int>(), 0);

        // --json prints the same report on stdout.
        auto j = kiln::test::runProgram("kiln-import", {onnxPath, "-o", tmp.filePath("again.kiln"), "--json"});
        QCOMPARE(j.exitCode, 0);
        QCOMPARE(json::parse(j.out.toStdString())["summary"]["kiln_nodes"], r["summary"]["kiln_nodes"]);
    }

    // A plugin operation exported as a custom-domain node imports as that operation when
    // kiln-import loads its plugin (--plugin), with its attributes and parameters.
    void pluginOperationWithItsPlugin() {
        const QString plugin = QStringLiteral(KILN_TEST_PLUGIN_DIR "/group_norm.so");
        auto loaded = ops::PluginRegistry::global().load(plugin.toStdString());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        Graph g = graphFromJson(R"([
          {"name":"x","op":"Input","attrs":{"shape":[4,6]}},
          {"name":"gn","op":"Plugin","inputs":["x"],"attrs":{"plugin_op":"example.GroupNorm","groups":2,"epsilon":0.01}},
          {"name":"flat","op":"Flatten","inputs":["gn"]},
          {"name":"y","op":"Dense","inputs":["flat"],"attrs":{"units":3}}])",
                                R"(["y"])");
        auto model = ops::analyzeModel(g);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 5);
        float* gamma = params.find("gn/gamma")->value.data<float>();
        for (int j = 0; j < 6; ++j) gamma[j] = 0.5f + 0.25f * static_cast<float>(j);
        auto bytes = io::exportOnnx(*model, params, {"plugin", {}, "{}", "test"});
        QVERIFY(bytes.ok());
        QTemporaryDir tmp;
        const QString onnxPath = tmp.filePath("gn.onnx"), project = tmp.filePath("gn.kiln"), report = tmp.filePath("gn.json");
        writeBytes(onnxPath, *bytes);
        auto run = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--report", report, "--plugin", plugin});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const json r = json::parse(readText(report));
        QVERIFY2(r.contains("placeholders") && r["placeholders"].is_array() && r["placeholders"].empty(), r.dump().c_str());
        auto back = io::loadProject(project.toStdString());
        QVERIFY(back.ok());
        const Node* gn = nullptr;
        for (const auto& n : back->graph.nodes)
            if (n.op == "Plugin") gn = &n;
        QVERIFY(gn);
        QCOMPARE(QString::fromStdString(gn->attrs.getString("plugin_op")), QStringLiteral("example.GroupNorm"));
        QCOMPARE(gn->attrs.getInt("groups"), int64_t{2});
        auto weights = io::loadSafetensors(tmp.filePath("gn.safetensors").toStdString());
        QVERIFY(weights.ok());
        const Tensor* g2 = weights->find(gn->name + "/gamma");
        QVERIFY(g2);
        for (int j = 0; j < 6; ++j) QCOMPARE(g2->data<float>()[j], gamma[j]);
    }

    void replaceHeadAfterANode() {
        Graph g = graphFromJson(R"([
          {"name":"image","op":"Input","attrs":{"shape":[12,12,3]}},
          {"name":"stem","op":"Conv2D","inputs":["image"],"attrs":{"filters":8,"kernel_size":[3,3],"padding":"same","activation":"relu"}},
          {"name":"gap","op":"GlobalAveragePooling2D","inputs":["stem"]},
          {"name":"logits","op":"Dense","inputs":["gap"],"attrs":{"units":10}}])",
                                R"(["logits"])");
        auto model = ops::analyzeModel(g);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 3);
        auto bytes = io::exportOnnx(*model, params, {"head", {}, "{}", "test"});
        QVERIFY(bytes.ok());
        QTemporaryDir tmp;
        const QString onnxPath = tmp.filePath("model.onnx"), project = tmp.filePath("new.kiln");
        writeBytes(onnxPath, *bytes);
        auto loadedOriginal = io::importOnnx(*bytes, "model.onnx", {true, false});
        QVERIFY(loadedOriginal.ok());
        std::string conv;
        for (const auto& n : loadedOriginal->graph.nodes)
            if (n.op == "Conv2D") conv = n.name;

        auto run = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--replace-head-after", QString::fromStdString(conv),
                                                          "--classes", "4", "--dropout", "0.5", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const json report = json::parse(run.out.toStdString());
        QCOMPARE(report["head"]["added"], json({"head_pooling", "head_dropout", "head_predictions"}));
        QCOMPARE(report["head"]["removed"].size(), size_t{2});
        auto loaded = io::loadProject(project.toStdString());
        QVERIFY(loaded.ok());
        QCOMPARE(loaded->graph.outputs, std::vector<std::string>{"head_predictions"});
        QCOMPARE(loaded->graph.node("head_dropout")->attrs.getFloat("rate"), 0.5);
        auto info = ops::analyzeModel(loaded->graph);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(info->nodes[size_t(info->outputs[0])].output.dims(), (std::vector<int64_t>{-1, 4}));
        // The weights file keeps the convolution's tensors only: the old Dense is gone.
        auto weights = io::loadSafetensors(tmp.filePath("new.safetensors").toStdString());
        QVERIFY(weights.ok());
        QCOMPARE(weights->tensors.size(), size_t{2});
        for (const auto& t : weights->tensors) QVERIFY(t.name.starts_with(conv + "/"));

        // Bad input: exit 2 with a message naming the node or the option, nothing written.
        const QString out2 = tmp.filePath("bad.kiln");
        struct Case {
            QStringList args;
            QString says;
        };
        const QList<Case> cases = {
            {{"--replace-head-after", "no_such_node", "--classes", "3"}, "no_such_node"},
            {{"--replace-head-after", QString::fromStdString(conv), "--classes", "0"}, "--classes"},
            {{"--replace-head-after", QString::fromStdString(conv)}, "--classes"},
            {{"--replace-head-after", QString::fromStdString(conv), "--classes", "3", "--dropout", "1.5"}, "--dropout"},
            {{"--classes", "3"}, "--replace-head-after"},
        };
        for (const auto& c : cases) {
            auto bad = kiln::test::runProgram("kiln-import", QStringList{onnxPath, "-o", out2} + c.args);
            QVERIFY2(bad.exitCode == 2, qPrintable(c.args.join(' ') + ": " + bad.err));
            QVERIFY2(bad.err.contains(c.says), qPrintable(bad.err));
            QVERIFY(!QFile::exists(out2));
        }
    }

    void badFilesExitTwo_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("mention");  // what the message must name besides the file
        QTest::newRow("truncated") << 0 << "";
        QTest::newRow("not onnx") << 1 << "";
        QTest::newRow("wrong attribute type") << 2 << "stem_conv";
        QTest::newRow("cycle") << 3 << "stem_relu";
        QTest::newRow("huge dimension") << 4 << "W";
        QTest::newRow("external data") << 5 << "W";
        QTest::newRow("wrong element type") << 6 << "x";
        QTest::newRow("missing file") << 7 << "";
    }
    void badFilesExitTwo() {
        QFETCH(int, kind);
        QFETCH(QString, mention);
        onnx::ModelProto m = foreignModel("Relu", "");
        auto* g = m.mutable_graph();
        std::string bytes = m.SerializeAsString();
        switch (kind) {
        case 0: bytes.resize(bytes.size() * 2 / 3); break;
        case 1: bytes = "this is not a model\n"; break;
        case 2: {
            auto* a = g->mutable_node(0)->mutable_attribute(0);  // pads as a float
            a->set_type(onnx::AttributeProto::FLOAT);
            a->clear_ints();
            a->set_f(1.0f);
            bytes = m.SerializeAsString();
            break;
        }
        case 3:
            g->mutable_node(1)->set_input(0, "e");
            bytes = m.SerializeAsString();
            break;  // Relu reads a later value
        case 4:
            g->mutable_initializer(0)->set_dims(0, int64_t{1} << 40);
            bytes = m.SerializeAsString();
            break;
        case 5: {
            auto* t = g->mutable_initializer(0);
            t->clear_float_data();
            t->set_data_location(onnx::TensorProto::EXTERNAL);
            auto* e = t->add_external_data();
            e->set_key("location");
            e->set_value("weights.bin");
            bytes = m.SerializeAsString();
            break;
        }
        case 6:
            g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
            bytes = m.SerializeAsString();
            break;
        default: break;
        }
        QTemporaryDir tmp;
        const QString path = tmp.filePath("broken.onnx");
        if (kind != 7) writeBytes(path, bytes);
        auto run = kiln::test::runProgram("kiln-import", {path, "-o", tmp.filePath("out.kiln")});
        QVERIFY2(run.exitCode == 2, qPrintable(QString::number(run.exitCode) + ": " + run.err));
        QVERIFY2(run.err.contains("broken.onnx"), qPrintable(run.err));
        if (!mention.isEmpty()) QVERIFY2(run.err.contains(mention), qPrintable(run.err));
        QVERIFY(!QFile::exists(tmp.filePath("out.kiln")));
        QVERIFY(!QFile::exists(tmp.filePath("out.safetensors")));
    }

    // An operation Kiln cannot compute, with a shape ONNX can infer: a Placeholder with that shape
    // that keeps everything, survives save/load, and blocks training, running and export by name.
    void placeholderKeepsTheGraph() {
        QTemporaryDir tmp;
        const QString onnxPath = tmp.filePath("erf.onnx"), project = tmp.filePath("erf.kiln"), report = tmp.filePath("erf.json");
        writeBytes(onnxPath, foreignModel("Erf", "").SerializeAsString());
        auto run = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--report", report});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains("erf") && run.out.contains("Erf"), qPrintable(run.out));
        const json r = json::parse(readText(report));
        QCOMPARE(r["summary"]["placeholders"].get<int>(), 1);
        QCOMPARE(r["placeholders"][0]["onnx_op"].get<std::string>(), std::string("Erf"));
        QCOMPARE(r["placeholders"][0]["output_shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{6, 6, 4}));

        auto loaded = io::loadProject(project.toStdString());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        const Node* ph = loaded->graph.node("erf");
        QVERIFY(ph);
        QCOMPARE(ph->op, std::string("Placeholder"));
        QCOMPARE(ph->attrs.getString("onnx_op"), std::string("Erf"));
        QCOMPARE(json::parse(ph->attrs.getString("onnx_attributes"))["strength"].get<double>(), 0.5);
        QCOMPARE(ph->extra["onnx_node"].get<std::string>(), std::string("mystery"));
        QCOMPARE(ph->extra["onnx_input_shapes"][0]["name"].get<std::string>(), std::string("r"));
        QCOMPARE(ph->extra["onnx_input_shapes"][0]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{-1, 4, 6, 6}));
        // The weights under the readable names (the ONNX names held slashes).
        auto weights = io::loadSafetensors(tmp.filePath("erf.safetensors").toStdString());
        QVERIFY(weights.ok());
        for (const char* name : {"conv2d/kernel", "conv2d/bias", "dense/kernel", "dense/bias"}) QVERIFY2(weights->find(name), name);
        QCOMPARE(weights->find("dense/kernel")->shape(), Shape({4, 2}));
        QCOMPARE(loaded->graph.node("dense")->extra["onnx_node"].get<std::string>(), std::string("/head/classifier/Gemm"));
        // Shapes flow through it: the editor can show the whole model.
        auto info = ops::analyzeModel(loaded->graph);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(info->info("erf").output.toString(), Shape({Shape::kBatch, 6, 6, 4}).toString());

        // Save and load again: nothing lost.
        const QString resaved = tmp.filePath("resaved.kiln");
        QVERIFY(io::saveProject(*loaded, resaved.toStdString()).ok());
        auto again = io::loadProject(resaved.toStdString());
        QVERIFY(again.ok());
        QVERIFY(again->graph.node("erf")->attrs == ph->attrs);
        QCOMPARE(again->graph.node("erf")->inputs, ph->inputs);
        QCOMPARE(again->graph.node("erf")->extra["onnx_node"], ph->extra["onnx_node"]);

        // Training refuses, naming the node.
        auto job = api::TrainingJob::prepare(*again, resaved.toStdString(), {});
        QVERIFY(!job.ok());
        QCOMPARE(job.error().node, std::string("erf"));
        QVERIFY2(job.error().message.find("erf (ONNX Erf)") != std::string::npos, job.error().message.c_str());
        QVERIFY2(job.error().message.find("train") != std::string::npos, job.error().message.c_str());
        // So do export and running.
        auto params = exec::ParamStore::create(*info, 0);
        auto exported = io::exportOnnx(*info, params, {"erf", {}, "{}", "test"});
        QVERIFY(!exported.ok());
        QVERIFY2(exported.error().message.find("erf (ONNX Erf)") != std::string::npos, exported.error().message.c_str());
        ThreadPool pool(1);
        exec::CompileOptions opts;
        opts.batch = 1;
        opts.training = false;
        auto plan = exec::Plan::compile(*info, params, opts, pool);
        QVERIFY(!plan.ok());
        QCOMPARE(plan.error().code, ErrorCode::Unsupported);
        QCOMPARE(plan.error().node, std::string("erf"));
    }

    // PyTorch's Conv2d(padding=1, stride=2) on an even size is neither "valid" nor "same": it
    // becomes a ZeroPadding2D in front of a "valid" Conv2D, with the same numbers.
    void explicitPaddingBecomesZeroPadding() {
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        auto* g = m.mutable_graph();
        auto* in = g->add_input();
        in->set_name("x");
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        tt->mutable_shape()->add_dim()->set_dim_param("batch");
        for (int d : {1, 6, 6}) tt->mutable_shape()->add_dim()->set_dim_value(d);
        auto* w = g->add_initializer();
        w->set_name("W");
        w->set_data_type(onnx::TensorProto::FLOAT);
        for (int d : {1, 1, 3, 3}) w->add_dims(d);
        for (int k = 0; k < 9; ++k) w->add_float_data(float(k + 1));
        auto* conv = g->add_node();
        conv->set_op_type("Conv");
        conv->set_name("/features/0/Conv");
        conv->add_input("x");
        conv->add_input("W");
        conv->add_output("y");
        auto ints = [&](const char* name, std::vector<int64_t> v) {
            auto* a = conv->add_attribute();
            a->set_name(name);
            a->set_type(onnx::AttributeProto::INTS);
            for (auto x : v) a->add_ints(x);
        };
        ints("pads", {1, 1, 1, 1});
        ints("strides", {2, 2});
        auto* t = g->add_node();  // channels-last out, as Kiln's outputs are
        t->set_op_type("Transpose");
        t->add_input("y");
        t->add_output("out");
        auto* perm = t->add_attribute();
        perm->set_name("perm");
        perm->set_type(onnx::AttributeProto::INTS);
        for (int p : {0, 2, 3, 1}) perm->add_ints(p);
        g->add_output()->set_name("out");

        io::ImportOptions opts;
        opts.readableNames = true;
        opts.placeholders = true;
        auto imported = io::importOnnx(m.SerializeAsString(), "pad.onnx", opts);
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
        QVERIFY(imported->placeholders.empty());
        QCOMPARE(imported->mapping.size(), size_t{2});
        QCOMPARE(imported->mapping[0].kilnNodes, (std::vector<std::string>{"zero_padding2d", "conv2d"}));
        QCOMPARE(imported->graph.node("zero_padding2d")->attrs.getInts("padding"), (std::vector<int64_t>{1, 1, 1, 1}));
        QCOMPARE(imported->graph.node("conv2d")->attrs.getString("padding"), std::string("valid"));
        auto info = ops::analyzeModel(imported->graph);
        QVERIFY(info.ok());
        QCOMPARE(info->info("conv2d").output.toString(), Shape({Shape::kBatch, 3, 3, 1}).toString());
        auto params = exec::ParamStore::create(*info, 0);
        QVERIFY(io::applyWeights(*imported, params).ok());
        ThreadPool pool(1);
        exec::CompileOptions copts;
        copts.batch = 1;
        copts.training = false;
        auto plan = exec::Plan::compile(*info, params, copts, pool);
        QVERIFY(plan.ok());
        float* x = (*plan)->input(size_t{0});
        for (int k = 0; k < 36; ++k) x[k] = float(k % 7) - 2.5f;
        QVERIFY((*plan)->forward().ok());
        for (int oy = 0; oy < 3; ++oy)
            for (int ox = 0; ox < 3; ++ox) {
                float want = 0;
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = oy * 2 + ky - 1, ix = ox * 2 + kx - 1;
                        if (iy >= 0 && iy < 6 && ix >= 0 && ix < 6) want += float(ky * 3 + kx + 1) * (float((iy * 6 + ix) % 7) - 2.5f);
                    }
                QVERIFY2(std::fabs((*plan)->output(0)[oy * 3 + ox] - want) < 1e-5, qPrintable(QString("%1,%2").arg(oy).arg(ox)));
            }
    }

    // A custom-domain operation whose shape nobody knows: it and everything after it become
    // placeholders; analysis stops at the first one, naming it.
    void unknownShapePlaceholder() {
        QTemporaryDir tmp;
        const QString onnxPath = tmp.filePath("custom.onnx"), project = tmp.filePath("custom.kiln");
        writeBytes(onnxPath, foreignModel("Mystery", "com.example").SerializeAsString());
        auto run = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const json r = json::parse(run.out.toStdString());
        QVERIFY(r["summary"]["placeholders"].get<int>() >= 2);
        QVERIFY(r["placeholders"][0]["output_shape"].is_null());
        auto loaded = io::loadProject(project.toStdString());
        QVERIFY(loaded.ok());
        const Node* ph = loaded->graph.node("mystery");
        QVERIFY(ph);
        QCOMPARE(ph->attrs.getString("onnx_domain"), std::string("com.example"));
        auto info = ops::analyzeModel(loaded->graph);
        QVERIFY(!info.ok());
        QCOMPARE(info.error().node, std::string("mystery"));
        QVERIFY2(info.error().message.find("com.example.Mystery") != std::string::npos, info.error().message.c_str());
        QVERIFY2(info.error().message.find("unknown") != std::string::npos, info.error().message.c_str());
    }

    // A custom-domain operation whose output shape the file does not state, followed by nodes
    // whose shapes it does (value_info, as exporters write it): only that operation is a
    // placeholder when its shape follows from what the file says; the nodes after it map.
    void placeholderTakesTheShapesTheFileStates() {
        auto valueInfo = [](onnx::ModelProto& m, const char* name, std::vector<int64_t> dims) {
            auto* v = m.mutable_graph()->add_value_info();
            v->set_name(name);
            auto* tt = v->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(onnx::TensorProto::FLOAT);
            tt->mutable_shape()->add_dim()->set_dim_param("batch");
            for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
        };
        io::ImportOptions opts;
        opts.readableNames = true;
        opts.placeholders = true;

        // The activation after it keeps its shape, and the file states the activation's shape.
        onnx::ModelProto m = foreignModel("Mystery", "com.example", "Sigmoid");
        valueInfo(m, "s", {4, 6, 6});
        auto imported = io::importOnnx(m.SerializeAsString(), "custom.onnx", opts);
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
        QCOMPARE(imported->placeholders, std::vector<std::string>{"mystery"});
        QCOMPARE(imported->graph.node("mystery")->attrs.getInts("output_shape"), (std::vector<int64_t>{6, 6, 4}));
        QCOMPARE(imported->graph.node("sigmoid")->op, std::string("Sigmoid"));
        QCOMPARE(imported->graph.node("dense")->op, std::string("Dense"));
        auto info = ops::analyzeModel(imported->graph);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(info->info("dense").output.toString(), Shape({Shape::kBatch, 2}).toString());
        auto params = exec::ParamStore::create(*info, 0);
        QVERIFY(io::applyWeights(*imported, params).ok());

        // Only the pooled value's shape is stated: the pooling that reads the unknown value stays
        // a placeholder with that shape (channels-last), and what follows it maps.
        onnx::ModelProto pooled = foreignModel("Mystery", "com.example");
        valueInfo(pooled, "p", {4, 1, 1});
        imported = io::importOnnx(pooled.SerializeAsString(), "custom.onnx", opts);
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
        QCOMPARE(imported->placeholders, (std::vector<std::string>{"mystery", "global_average_pool"}));
        QVERIFY(!imported->graph.node("mystery")->attrs.values().count("output_shape"));
        QCOMPARE(imported->graph.node("global_average_pool")->attrs.getInts("output_shape"), (std::vector<int64_t>{1, 1, 4}));
        QCOMPARE(imported->graph.node("dense")->op, std::string("Dense"));
        // The graph still waits for the unknown one, and says so by name.
        info = ops::analyzeModel(imported->graph);
        QVERIFY(!info.ok());
        QCOMPARE(info.error().node, std::string("mystery"));
    }

    // Keras models through kiln-import: the project, the weights and a report naming Keras layers;
    // damaged Keras files exit 2 naming the file and the JSON or HDF5 path, writing nothing.
    void kerasModels() {
        QTemporaryDir tmp;
        QString log;
        switch (kiln::test::makeKerasModels(tmp.path(), {"separable", "unknown"}, &log)) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("Keras is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        for (const QString ext : {"keras", "h5"}) {
            const QString project = tmp.filePath("sep_" + ext + ".kiln"), weights = tmp.filePath("sep_" + ext + "_w.safetensors");
            auto run = kiln::test::runProgram("kiln-import", {tmp.filePath("separable." + ext), "-o", project, "--weights-out", weights, "--json"});
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            const json r = json::parse(run.out.toStdString());
            QCOMPARE(r["source_format"].get<std::string>(), std::string("keras"));
            QCOMPARE(r["summary"]["keras_layers"].get<int>(), 9);
            QCOMPARE(r["summary"]["placeholders"].get<int>(), 0);
            bool sep = false;
            for (const auto& n : r["nodes"])
                if (n["keras_name"] == "sep") {
                    sep = true;
                    QCOMPARE(n["keras_class"].get<std::string>(), std::string("SeparableConv2D"));
                }
            QVERIFY(sep);
            auto loaded = io::loadProject(project.toStdString());
            QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
            QCOMPARE(loaded->extra["imported_from"]["format"].get<std::string>(), std::string("keras"));
            auto model = ops::analyzeModel(loaded->graph);
            QVERIFY(model.ok());
            auto w = io::loadSafetensors(weights.toStdString());
            QVERIFY(w.ok());
            auto params = exec::ParamStore::create(*model, 0);
            for (auto& p : params.params()) {
                const Tensor* t = w->find(p.name);
                QVERIFY2(t, p.name.c_str());
                QCOMPARE(t->shape(), p.value.shape());
            }
            for (const auto& n : loaded->graph.nodes) QVERIFY2(loaded->layout["nodes"].contains(n.name), n.name.c_str());

            // An unknown layer: a placeholder named in the output.
            run = kiln::test::runProgram("kiln-import", {tmp.filePath("unknown." + ext), "-o", tmp.filePath("unknown.kiln")});
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(run.out.contains("conv1d") && run.out.contains("Conv1D"), qPrintable(run.out));
        }

        struct Bad {
            QString file;
            QString mention;
        };
        const std::string archive = readText(tmp.filePath("separable.keras"));
        writeBytes(tmp.filePath("truncated.keras"), archive.substr(0, archive.size() / 2));
        const std::string legacy = readText(tmp.filePath("separable.h5"));
        writeBytes(tmp.filePath("truncated.h5"), legacy.substr(0, legacy.size() / 2));
        for (const Bad& bad : {Bad{"bad_json.keras", "config.json"}, Bad{"bad_field.keras", "config.layers[1].config.filters"},
                               Bad{"plain.h5", "model_config"}, Bad{"truncated.keras", ""}, Bad{"truncated.h5", ""}}) {
            auto run = kiln::test::runProgram("kiln-import", {tmp.filePath(bad.file), "-o", tmp.filePath("bad.kiln")});
            QVERIFY2(run.exitCode == 2, qPrintable(bad.file + ": " + QString::number(run.exitCode) + ": " + run.err));
            QVERIFY2(run.err.contains(bad.file), qPrintable(run.err));
            if (!bad.mention.isEmpty()) QVERIFY2(run.err.contains(bad.mention), qPrintable(run.err));
            QVERIFY(!QFile::exists(tmp.filePath("bad.kiln")));
            QVERIFY(!QFile::exists(tmp.filePath("bad.safetensors")));
        }
    }

    // A Keras wrapper Kiln cannot compute (Bidirectional(LSTM)) through kiln-import: exit 0, a
    // placeholder line naming the wrapped class and the weights kept, and the report's placeholder
    // entry listing those weight tensors, which the weights file holds.
    void kerasWrapperPlaceholder() {
        QTemporaryDir tmp;
        QString log;
        switch (kiln::test::makeKerasModels(tmp.path(), {"wrappers"}, &log)) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("Keras is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        for (const QString ext : {"keras", "h5"}) {
            const QString project = tmp.filePath("wrappers_" + ext + ".kiln"), weights = tmp.filePath("wrappers_" + ext + ".safetensors");
            const QString report = tmp.filePath("wrappers_" + ext + ".json");
            auto run = kiln::test::runProgram("kiln-import", {tmp.filePath("wrappers." + ext), "-o", project, "--report", report});
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(run.out.contains("Placeholder: bilstm") && run.out.contains("Bidirectional(LSTM)"), qPrintable(run.out));
            QVERIFY2(run.out.contains("bilstm/forward_lstm.lstm_cell."), qPrintable(run.out));
            const json r = json::parse(readText(report));
            QCOMPARE(r["summary"]["placeholders"].get<int>(), 1);
            const json& p = r["placeholders"][0];
            QCOMPARE(p["kiln_node"].get<std::string>(), std::string("bilstm"));
            QCOMPARE(p["keras_class"].get<std::string>(), std::string("Bidirectional(LSTM)"));
            QCOMPARE(p["output_shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{5, 6}));
            QCOMPARE(p["weight_tensors"].size(), size_t{6});
            auto w = io::loadSafetensors(weights.toStdString());
            QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
            for (const auto& name : p["weight_tensors"]) {
                QVERIFY2(name.get<std::string>().rfind("bilstm/", 0) == 0, name.dump().c_str());
                QVERIFY2(w->find(name.get<std::string>()), name.dump().c_str());
            }
            // The TimeDistributed(Dense) layers around it are Dense nodes.
            for (const auto& n : r["nodes"])
                if (n["keras_name"] == "td_proj") {
                    QCOMPARE(n["keras_class"].get<std::string>(), std::string("TimeDistributed(Dense)"));
                    QCOMPARE(n["kind"].get<std::string>(), std::string("node"));
                }
            auto loaded = io::loadProject(project.toStdString());
            QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
            QCOMPARE(loaded->graph.node("bilstm")->op, std::string("Placeholder"));
            QCOMPARE(loaded->graph.node("td_score")->op, std::string("Dense"));
        }
    }

    // Two legacy .h5 files of the "separable" model of tests/engine/io/keras_models.py, each with
    // one byte changed: the size of an object in the global heap (the HDF5 library of Debian 12,
    // 1.10.8, reads past its buffer and crashes on the model_config attribute) and the length of
    // a layer's weight name (the library fills memory for hours). kiln-import reads Keras files in
    // a child process: both end with exit 2 and an error naming the file, within the --timeout
    // given (a library that refuses them cleanly gives exit 2 as well), and nothing is written.
    void damagedHdf5EndsInTime() {
        for (const char* file : {"heap_object_size.h5", "string_length.h5"}) {
            QTemporaryDir tmp;
            const QString path = QStringLiteral(KILN_SOURCE_DIR "/tests/app/data/damaged_hdf5/") + file;
            QVERIFY2(QFile::exists(path), qPrintable(path));
            QTemporaryDir reports;
            QElapsedTimer clock;
            clock.start();
            auto run = kiln::test::runProgram("kiln-import", {path, "-o", tmp.filePath("bad.kiln"), "--timeout", "5"}, 120000,
                                              kiln::test::expectedCrashEnvironment(reports.path()));
            const QStringList strays = kiln::test::reportsWithout(reports.path(), QStringLiteral("libhdf5"));
            QVERIFY2(strays.isEmpty(), qPrintable(strays.join(' ')));
            const double seconds = double(clock.elapsed()) / 1000.0;
            qInfo("%s: exit %d after %.1f s: %s", file, run.exitCode, seconds, qPrintable(run.err.trimmed()));
            QVERIFY2(run.exitCode == 2, qPrintable(QString("%1: exit %2: %3").arg(file).arg(run.exitCode).arg(run.err)));
            QVERIFY2(run.err.contains(file), qPrintable(run.err));
            QVERIFY2(seconds < 60.0, qPrintable(QString::number(seconds)));
            QVERIFY(!QFile::exists(tmp.filePath("bad.kiln")));
            QVERIFY(!QFile::exists(tmp.filePath("bad.safetensors")));
        }
        // A bad limit is a usage error.
        QTemporaryDir tmp;
        auto bad = kiln::test::runProgram("kiln-import", {QStringLiteral(KILN_SOURCE_DIR "/tests/app/data/damaged_hdf5/string_length.h5"), "-o",
                                                          tmp.filePath("bad.kiln"), "--timeout", "-1"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--timeout"), qPrintable(bad.err));
    }
};

QTEST_GUILESS_MAIN(TestKilnImport)
#include "tst_kiln_import.moc"
