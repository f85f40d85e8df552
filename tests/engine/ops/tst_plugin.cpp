// SPDX-License-Identifier: Apache-2.0
// Plugin operations end to end with the example GroupNorm plugin (KILN_TEST_PLUGIN_DIR): loading
// and refusals (ABI version, no entry point, not a library, duplicate op), the plugin checker, a
// closed-form forward, training a small model through it, project round trips with and without
// the plugin, and export (ONNX custom domain with a warning, SavedModel refused); listeners hear
// the loads that change the registry, and only those.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/exec/param_store.h"
#include "engine/io/onnx_export.h"
#include "engine/io/model_repository.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/io/saved_model_export.h"
#include "engine/ops/model.h"
#include "engine/ops/plugin_check.h"
#include "engine/ops/plugin_ops.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;

namespace {

const std::string kPluginDir = KILN_TEST_PLUGIN_DIR;
const std::string kGroupNorm = kPluginDir + "/group_norm.so";

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

io::Project project(const std::string& nodes, const std::string& training = "{}") {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes +
                             R"(}, "training": )" + training + "}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

// Input [4, 6] -> GroupNorm (3 groups) -> Flatten -> Dense(1).
const char* kModel = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [4, 6]}},
  {"name": "gn", "op": "Plugin", "inputs": ["x"], "attrs": {"plugin_op": "example.GroupNorm", "groups": 3, "epsilon": 0.001}},
  {"name": "flat", "op": "Flatten", "inputs": ["gn"]},
  {"name": "y", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 1}}
])";

}  // namespace

class TestPlugin : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        auto info = PluginRegistry::global().load(kGroupNorm);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(info->abiVersion, KILN_PLUGIN_ABI_VERSION);
        QCOMPARE(q(info->name), QString("example"));
        QCOMPARE(info->ops, std::vector<std::string>{"example.GroupNorm"});
    }

    void loadsOnceAndLists() {
        auto again = PluginRegistry::global().load(kGroupNorm);
        QVERIFY(again.ok());
        int count = 0;
        for (const auto& p : PluginRegistry::global().plugins()) count += p.ops == again->ops;
        QCOMPARE(count, 1);
        const PluginOp* op = PluginRegistry::global().find("example.GroupNorm");
        QVERIFY(op);
        QCOMPARE(op->attrs.size(), size_t{2});
        QCOMPARE(q(op->attrs[0].name), QString("groups"));
        QCOMPARE(op->attrs[0].type, AttrType::Int);
        QVERIFY(op->attrs[0].defaultValue == AttrValue(int64_t{2}));
        QCOMPARE(*op->attrs[0].min, 1.0);
        QCOMPARE(op->attrs[1].type, AttrType::Float);
        QVERIFY(!op->attrs[1].doc.empty());
        QCOMPARE(PluginRegistry::global().find("example.Nothing"), nullptr);
    }

    void listenersHearChanges() {
        auto& registry = PluginRegistry::global();
        int calls = 0;
        // A listener may use the registry, and even load from it, while it is called.
        const int id = registry.addListener([&] {
            ++calls;
            (void)registry.load(kGroupNorm);
            (void)registry.plugins();
        });
        QVERIFY(registry.load(kGroupNorm).ok());  // loaded already: nothing changes
        QCOMPARE(calls, 0);
        QVERIFY(!registry.load(kPluginDir + "/bad/no_entry.so").ok());  // a new failure is listed
        QCOMPARE(calls, 1);
        registry.removeListener(id);
        QVERIFY(!registry.load(kPluginDir + "/bad/no_entry.so").ok());
        QCOMPARE(calls, 1);
    }

    void refusesWrongAbiVersion() {
        const std::string path = kPluginDir + "/bad/wrong_abi.so";
        auto r = PluginRegistry::global().load(path);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::PluginError);
        // It declares this Kiln's version plus 41 minor versions: newer than Kiln knows.
        const std::string expected = abiVersionText(KILN_PLUGIN_ABI_VERSION);
        const std::string found = abiVersionText(KILN_PLUGIN_ABI_VERSION + 41);
        QCOMPARE(q(expected), QString("%1.%2").arg(KILN_PLUGIN_ABI_MAJOR).arg(KILN_PLUGIN_ABI_MINOR));
        QCOMPARE(q(r.error().param("expected")), q(expected));
        QCOMPARE(q(r.error().param("found")), q(found));
        const std::string m = r.error().message;
        QVERIFY2(m.find("wrong_abi.so") != std::string::npos, m.c_str());
        QVERIFY2(m.find("ABI version " + found) != std::string::npos, m.c_str());
        QVERIFY2(m.find("loads versions 1.0 to " + expected) != std::string::npos, m.c_str());
        // Nothing of it was registered.
        for (const auto& p : PluginRegistry::global().plugins()) QVERIFY(p.path.find("wrong_abi") == std::string::npos);
    }

    void refusesLibraryWithoutEntryPoint() {
        auto r = PluginRegistry::global().load(kPluginDir + "/bad/no_entry.so");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::PluginError);
        QVERIFY2(r.error().message.find("exports no kiln_plugin_describe()") != std::string::npos,
                 r.error().message.c_str());
    }

    void refusesFilesThatAreNotLibraries() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("text.so").toStdString();
        std::ofstream(path) << "not a shared library\n";
        auto r = PluginRegistry::global().load(path);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::PluginError);
        QVERIFY2(r.error().message.find("cannot be loaded") != std::string::npos, r.error().message.c_str());
        QCOMPARE(q(r.error().param("path")), q(std::filesystem::weakly_canonical(path).string()));

        auto missing = loadPluginsFrom(dir.filePath("nowhere.so").toStdString());
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
    }

    void refusesDuplicateOperation() {
        QTemporaryDir dir;
        const std::string copy = dir.filePath("group_norm_copy.so").toStdString();
        std::filesystem::copy_file(kGroupNorm, copy);
        auto r = PluginRegistry::global().load(copy);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::PluginError);
        QCOMPARE(q(r.error().param("op")), QString("example.GroupNorm"));
        QVERIFY2(r.error().message.find("already provided by") != std::string::npos, r.error().message.c_str());
    }

    void searchPathFromEnvironment() {
        QTemporaryDir data;
        qputenv("XDG_DATA_HOME", data.path().toUtf8());
        QCOMPARE(q(userPluginFolder()), data.path() + "/kiln/plugins");
        qputenv("KILN_PLUGIN_PATH", QByteArray("/a/b::") + QByteArray::fromStdString(kPluginDir) + "/bad/wrong_abi.so");
        QCOMPARE(pluginPathEntries().size(), size_t{2});
        // An entry of KILN_PLUGIN_PATH with a wrong version stops the loading with its error.
        qputenv("KILN_PLUGIN_PATH", QByteArray::fromStdString(kPluginDir) + "/bad/wrong_abi.so");
        Status st = loadPlugins({});
        QVERIFY(!st.ok());
        QCOMPARE(st.error().code, ErrorCode::PluginError);
        qunsetenv("KILN_PLUGIN_PATH");
        qunsetenv("XDG_DATA_HOME");
    }

    // The checker the studio's "Check plugin" runs: every check of every case passes.
    void checkerPassesExample() {
        ThreadPool pool(2);
        const auto results = checkPluginOp(*PluginRegistry::global().find("example.GroupNorm"), pool);
        QCOMPARE(results.size(), size_t{9});  // 3 cases x (shape, forward, gradient)
        for (const auto& r : results)
            QVERIFY2(r.outcome == PluginCheck::Outcome::Passed, qPrintable(q(r.caseName + ": " + r.detail)));
        QVERIFY(results[1].worstError < 1e-5);
    }

    // One sample [1, 4] = (1, 2, 3, 4), two groups: each group {a, a+1} has mean a + 1/2 and
    // variance 1/4, so y = -+ (1/2) / sqrt(1/4 + eps) * gamma + beta.
    void closedFormForward() {
        const auto p = project(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "gn", "op": "Plugin", "inputs": ["x"], "attrs": {"plugin_op": "example.GroupNorm", "groups": 2, "epsilon": 0.01}}
        ])");
        auto m = analyzeModel(p.graph);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        const NodeInfo& ni = m->info("gn");
        QCOMPARE(ni.params.size(), size_t{2});
        QCOMPARE(q(ni.params[0].name), QString("gamma"));
        QCOMPARE(ni.params[0].init, Init::Ones);
        QCOMPARE(ni.params[1].init, Init::Zeros);
        const int i = p.graph.find("gn");
        const std::vector<Shape> in{Shape{1, 4}};
        const ShapeContext ctx{p.graph.nodes[static_cast<size_t>(i)], ni.attrs, in};
        auto k = opDef(OpKind::Plugin).cpu(ctx, Shape{1, 4});
        QVERIFY(k.ok());
        std::vector<float> x{1, 2, 3, 4}, y(4), gamma{2, 2, 3, 3}, beta{1, 1, -1, -1};
        const float* ins[] = {x.data()};
        float* params[] = {gamma.data(), beta.data()};
        ThreadPool pool(2);
        KernelIo io;
        io.in = ins;
        io.params = params;
        io.out = y.data();
        io.pool = &pool;
        QVERIFY((*k)->forward(io).ok());
        const double h = 0.5 / std::sqrt(0.25 + 0.01);
        const double want[] = {-h * 2 + 1, h * 2 + 1, -h * 3 - 1, h * 3 - 1};
        for (int j = 0; j < 4; ++j)
            QVERIFY2(std::fabs(y[static_cast<size_t>(j)] - want[j]) < 1e-5,
                     qPrintable(QString("y[%1] = %2, want %3").arg(j).arg(y[static_cast<size_t>(j)]).arg(want[j])));
    }

    void trainsThroughPlugin() {
        const auto p = project(kModel);
        auto m = analyzeModel(p.graph);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        auto c = train::parseTrainingConfig(nlohmann::json::parse(R"({"epochs": 8, "batch_size": 16, "seed": 3,
            "optimizer": {"type": "adam", "learning_rate": 0.02}, "loss": "MeanSquaredError"})"),
                                            m->graph);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        // Target: a fixed linear read-out of the group-normalised features.
        constexpr int64_t kSamples = 128;
        std::vector<float> x, y;
        for (int64_t s = 0; s < kSamples; ++s) {
            double t = 0;
            for (int j = 0; j < 24; ++j) {
                const float v = rng::normal(5, static_cast<uint64_t>(s), static_cast<uint64_t>(j)) * (1.0f + j % 3);
                x.push_back(v);
                t += (j % 2 ? 0.3 : -0.2) * v;
            }
            y.push_back(static_cast<float>(t));
        }
        data::Column xc, yc;
        xc.name = "features";
        xc.sampleShape = Shape{4, 6};
        xc.values = x;
        yc.name = "label";
        yc.sampleShape = Shape{1};
        yc.values = y;
        auto set = data::InMemoryDataset::create(kSamples, {std::move(xc), std::move(yc)});
        QVERIFY(set.ok());
        train::DataBundle bundle;
        bundle.train = std::move(*set);
        ThreadPool pool(2);
        auto t = train::Trainer::create(*m, *c, std::move(bundle), pool);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        const std::vector<float> gammaBefore((*t)->params().find("gn/gamma")->value.data<float>(),
                                             (*t)->params().find("gn/gamma")->value.data<float>() + 6);
        auto fit = (*t)->fit();
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        const double first = fit->history.front().train.loss, last = fit->history.back().train.loss;
        qInfo("loss over %zu epochs: %g -> %g", fit->history.size(), first, last);
        QVERIFY2(std::isfinite(last) && last < 0.5 * first, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
        // The plugin's parameters learned too.
        const float* gamma = (*t)->params().find("gn/gamma")->value.data<float>();
        bool moved = false;
        for (int j = 0; j < 6; ++j) moved = moved || gamma[j] != gammaBefore[static_cast<size_t>(j)];
        QVERIFY(moved);
    }

    void projectRoundTrip() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.kiln").toStdString();
        auto p = project(kModel);
        QVERIFY(io::saveProject(p, path).ok());
        auto back = io::loadProject(path);
        QVERIFY(back.ok());
        const Node* gn = back->graph.node("gn");
        QVERIFY(gn);
        QCOMPARE(q(gn->op), QString("Plugin"));
        QVERIFY(gn->attrs == p.graph.node("gn")->attrs);
        QVERIFY(analyzeModel(back->graph).ok());
    }

    // A project naming an operation of a plugin that is not loaded: it loads, keeps every
    // attribute on save, and analysis, training and export refuse with the operation named.
    void missingPluginKeepsNodeAndRefuses() {
        const char* nodes = R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "swish", "op": "Plugin", "inputs": ["x"],
           "attrs": {"plugin_op": "acme.LearnedSwish", "beta": 1.5, "mode": "fast", "taps": [1, 2, 3], "on": true}},
          {"name": "y", "op": "Dense", "inputs": ["swish"], "attrs": {"units": 2}}
        ])";
        auto p = project(nodes);
        const std::string text = io::serializeProject(p);
        auto again = io::parseProject(text, "again.kiln");
        QVERIFY(again.ok());
        QCOMPARE(q(io::serializeProject(*again)), q(text));
        const Node* n = again->graph.node("swish");
        QVERIFY(n->attrs == p.graph.node("swish")->attrs);
        QCOMPARE(n->attrs.values().size(), size_t{5});

        auto m = analyzeModel(again->graph);
        QVERIFY(!m.ok());
        QCOMPARE(m.error().code, ErrorCode::UnknownOp);
        QCOMPARE(q(m.error().node), QString("swish"));
        QVERIFY2(m.error().message.find("acme.LearnedSwish, which no loaded plugin provides") != std::string::npos,
                 m.error().message.c_str());
        QCOMPARE(missingPluginNodes(again->graph), std::vector<std::string>{"swish (acme.LearnedSwish)"});
        for (const char* action : {"train", "export"}) {
            Status st = refusePlaceholders(again->graph, action);
            QVERIFY(!st.ok());
            QCOMPARE(st.error().code, ErrorCode::Unsupported);
            QVERIFY2(st.error().message.find(std::string("cannot ") + action + " the model") != std::string::npos,
                     st.error().message.c_str());
            QVERIFY(st.error().message.find("swish (acme.LearnedSwish)") != std::string::npos);
        }
    }

    void onnxExportWritesCustomDomain() {
        const auto p = project(kModel);
        auto m = analyzeModel(p.graph);
        QVERIFY(m.ok());
        auto params = exec::ParamStore::create(*m, 1);
        std::vector<std::string> warnings;
        auto bytes = io::exportOnnx(*m, params, {}, &warnings);
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        QCOMPARE(warnings.size(), size_t{1});
        QVERIFY2(warnings[0].find("example.GroupNorm") != std::string::npos, warnings[0].c_str());
        onnx::ModelProto proto;
        QVERIFY(proto.ParseFromString(*bytes));
        const onnx::NodeProto* gn = nullptr;
        for (const auto& n : proto.graph().node())
            if (n.op_type() == "GroupNorm") gn = &n;
        QVERIFY(gn);
        QCOMPARE(q(gn->domain()), QString("ai.kiln.plugin.example"));
        QCOMPARE(gn->input_size(), 3);  // x, gamma, beta
        QCOMPARE(q(gn->input(0)), QString("x"));
        std::map<std::string, const onnx::AttributeProto*> attrs;
        for (const auto& a : gn->attribute()) attrs[a.name()] = &a;
        QCOMPARE(attrs.size(), size_t{2});
        QCOMPARE(attrs.at("groups")->i(), int64_t{3});
        QCOMPARE(attrs.at("epsilon")->f(), 0.001f);
        bool imported = false;
        for (const auto& o : proto.opset_import()) imported = imported || o.domain() == "ai.kiln.plugin.example";
        QVERIFY(imported);
        bool gammaInit = false;
        for (const auto& t : proto.graph().initializer()) gammaInit = gammaInit || t.name() == gn->input(1);
        QVERIFY(gammaInit);
    }

    // Export -> import: the custom-domain node comes back as the plugin operation with its
    // attributes and parameters, and computes what the original computes.
    void onnxImportRoundTrip() {
        const auto p = project(kModel);
        auto m = analyzeModel(p.graph);
        QVERIFY(m.ok());
        auto params = exec::ParamStore::create(*m, 1);
        // Parameters away from GroupNorm's identity start, so a lost or swapped one shows.
        for (const char* name : {"gn/gamma", "gn/beta"}) {
            float* v = params.find(name)->value.data<float>();
            for (int j = 0; j < 6; ++j) v[j] = (name[3] == 'g' ? 1.0f : 0.0f) + 0.1f * static_cast<float>(j) - 0.2f;
        }
        auto bytes = io::exportOnnx(*m, params, {});
        QVERIFY(bytes.ok());
        auto back = io::importOnnx(*bytes, "model.onnx");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QVERIFY(back->placeholders.empty());
        const Node* gn = nullptr;
        for (const auto& n : back->graph.nodes)
            if (n.op == "Plugin") gn = &n;
        QVERIFY(gn);
        QCOMPARE(q(pluginOpName(*gn)), QString("example.GroupNorm"));
        QCOMPARE(gn->attrs.getInt("groups"), int64_t{3});
        QCOMPARE(gn->attrs.getFloat("epsilon"), static_cast<double>(0.001f));
        bool mapped = false;
        for (const auto& map : back->mapping)
            if (map.sourceOp == "ai.kiln.plugin.example.GroupNorm") mapped = map.kind == io::NodeMapping::Kind::Node && map.kilnNodes == std::vector<std::string>{gn->name};
        QVERIFY(mapped);
        // The same outputs on the same batch (Kiln's plan against the re-imported graph's).
        std::vector<Tensor> batch;
        Tensor x(Shape{5, 4, 6});
        for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = rng::normal(9, 1, static_cast<uint64_t>(k)) * 2.0f + 0.5f;
        batch.push_back(std::move(x));
        ThreadPool pool(2);
        auto parity = io::checkOnnxParity(*m, params, *bytes, batch, pool);
        QVERIFY2(parity.ok(), parity.ok() ? "" : parity.error().toString().c_str());
        qInfo("round trip: largest difference %g", parity->maxAbsDiff);
        QVERIFY(parity->passed);
        QVERIFY(parity->maxAbsDiff < 1e-6);

        // Attributes the operation does not have, or of the wrong type: a placeholder saying so.
        onnx::ModelProto proto;
        QVERIFY(proto.ParseFromString(*bytes));
        for (auto& n : *proto.mutable_graph()->mutable_node())
            if (n.op_type() == "GroupNorm")
                for (auto& a : *n.mutable_attribute())
                    if (a.name() == "groups") {
                        a.set_type(onnx::AttributeProto::FLOAT);
                        a.set_f(3.0f);
                    }
        io::ImportOptions opt;
        opt.placeholders = true;
        auto bad = io::importOnnx(proto.SerializeAsString(), "bad.onnx", opt);
        QVERIFY2(bad.ok(), bad.ok() ? "" : bad.error().toString().c_str());
        // (The nodes after it read a value of unknown shape and stay placeholders too.)
        QVERIFY(!bad->placeholders.empty());
        bool said = false;
        for (const auto& map : bad->mapping)
            if (map.kind == io::NodeMapping::Kind::Placeholder && map.sourceOp == "ai.kiln.plugin.example.GroupNorm")
                said = map.reason.find("plugin operation example.GroupNorm: attribute \"groups\" must be an integer") != std::string::npos;
        QVERIFY(said);
        auto strict = io::importOnnx(proto.SerializeAsString(), "bad.onnx");
        QVERIFY(!strict.ok());
        QCOMPARE(strict.error().code, ErrorCode::Unsupported);
    }

    // Publishing a model with a plugin operation checks its ONNX file through the loaded plugin.
    void repositoryExportChecksParity() {
        QTemporaryDir dir;
        const auto p = project(kModel);
        auto m = analyzeModel(p.graph);
        QVERIFY(m.ok());
        auto params = exec::ParamStore::create(*m, 2);
        io::RepositoryExport req;
        req.base = dir.path().toStdString();
        req.name = "gn";
        req.formats.savedModel = false;  // SavedModel refuses plugin operations
        req.projectText = io::serializeProject(p);
        ThreadPool pool(2);
        auto r = io::exportToRepository(*m, params, req, pool);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY(r->parityChecked);
        QVERIFY(r->parity.passed);
        QCOMPARE(r->warnings.size(), size_t{1});
        QVERIFY2(r->warnings[0].find("custom domain ai.kiln.plugin.example") != std::string::npos, r->warnings[0].c_str());
    }

    // Without the plugin loaded the node is a placeholder whose reason names the plugin operation.
    void onnxImportWithoutPluginNamesIt() {
        onnx::ModelProto proto;
        auto* g = proto.mutable_graph();
        proto.set_ir_version(8);
        auto* opset = proto.add_opset_import();
        opset->set_version(17);
        auto* custom = proto.add_opset_import();
        custom->set_domain("ai.kiln.plugin.acme");
        custom->set_version(1);
        auto* in = g->add_input();
        in->set_name("x");
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        tt->mutable_shape()->add_dim()->set_dim_param("N");
        tt->mutable_shape()->add_dim()->set_dim_value(4);
        auto* n = g->add_node();
        n->set_op_type("LearnedSwish");
        n->set_domain("ai.kiln.plugin.acme");
        n->set_name("swish");
        n->add_input("x");
        n->add_output("y");
        auto* out = g->add_output();
        out->set_name("y");
        auto strict = io::importOnnx(proto.SerializeAsString(), "acme.onnx");
        QVERIFY(!strict.ok());
        QCOMPARE(strict.error().code, ErrorCode::UnknownOp);
        QVERIFY2(strict.error().message.find("plugin operation acme.LearnedSwish, which no loaded plugin provides") != std::string::npos,
                 strict.error().message.c_str());
        QCOMPARE(q(strict.error().node), QString("swish"));
    }

    void savedModelRefuses() {
        const auto p = project(kModel);
        auto m = analyzeModel(p.graph);
        QVERIFY(m.ok());
        auto params = exec::ParamStore::create(*m, 1);
        auto r = io::exportSavedModel(*m, params, {});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Unsupported);
        QCOMPARE(q(r.error().node), QString("gn"));
        QVERIFY2(r.error().message.find("example.GroupNorm") != std::string::npos, r.error().message.c_str());
    }
};

QTEST_APPLESS_MAIN(TestPlugin)
#include "tst_plugin.moc"
