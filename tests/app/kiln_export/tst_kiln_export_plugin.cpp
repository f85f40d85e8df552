// kiln-test-timeout: 600
// kiln-test-labels: slow
// SPDX-License-Identifier: Apache-2.0
// kiln-export --plugin end to end: a model whose GroupNorm node comes from the example plugin
// (loaded only through --plugin) goes to ONNX as one node of the custom domain
// ai.kiln.plugin.example with its attributes and its saved parameters as initializers, the parity
// check runs through the loaded plugin, and the warning is printed on stderr and listed in --json;
// without the plugin the export stops naming the node and the operation, SavedModel refuses the
// node, and a plugin path that does not exist is refused with exit 2.
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <map>

#include "../plugin_model.h"

using nlohmann::json;

namespace {

using kiln::test::Run;

const QString kPlugin = QStringLiteral(KILN_TEST_PLUGIN_DIR "/group_norm.so");

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

// The float values of an ONNX initializer (raw bytes or float_data).
std::vector<float> initializerValues(const onnx::TensorProto& t) {
    std::vector<float> v;
    if (!t.raw_data().empty()) {
        v.resize(t.raw_data().size() / sizeof(float));
        std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    } else {
        v.assign(t.float_data().begin(), t.float_data().end());
    }
    return v;
}

}  // namespace

class TestKilnExportPlugin : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_project, m_weights, m_home;
    kiln::test::GroupNormWeights m_saved;

    Run exportModel(const QStringList& extra) {
        QStringList args = {m_project, "--weights", m_weights, "--base", m_dir.filePath("repo"), "--name", "gn"};
        return kiln::test::runIsolated("kiln_export/kiln-export", args + extra, m_home);
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kiln::test::program("kiln_export/kiln-export"))) QSKIP("kiln-export is not built");
        QVERIFY(m_dir.isValid());
        m_home = m_dir.filePath("home");
        QVERIFY(QDir().mkpath(m_home));
        m_project = write(m_dir, "gn_model.kiln", kiln::test::kGroupNormProject);
        m_weights = m_dir.filePath("weights.safetensors");
        std::string error;
        m_saved = kiln::test::writeGroupNormWeights(kPlugin, m_weights.toStdString(), error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(m_saved.gamma.size(), size_t(kiln::test::kChannels));
    }

    // --json: the custom-domain node, its attributes, the parameters as initializers, parity
    // through the plugin, and the warning.
    void onnxWithTheCustomDomainNode() {
        const Run r = exportModel({"--plugin", kPlugin, "--formats", "onnx,kiln", "--version", "1", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const json j = json::parse(r.out.toStdString());
        QVERIFY(j["parity_checked"].get<bool>());
        QVERIFY(j["parity"]["passed"].get<bool>());
        QCOMPARE(j["parity"]["source"].get<std::string>(), std::string("synthetic"));  // the project has no data
        QVERIFY2(j["parity"]["max_abs_diff"].get<double>() < 1e-5, j.dump().c_str());
        QCOMPARE(j["warnings"].size(), size_t{1});
        const std::string warning = j["warnings"][0].get<std::string>();
        QVERIFY2(warning.find("node \"gn\" runs the plugin operation example.GroupNorm, exported as GroupNorm of the "
                              "custom domain ai.kiln.plugin.example") != std::string::npos,
                 warning.c_str());
        // --json keeps the warning off stderr.
        QVERIFY2(!r.err.contains("warning"), qPrintable(r.err));

        const QString onnxPath = QString::fromStdString(j["version_dir"].get<std::string>()) + "/model.onnx";
        QFile f(onnxPath);
        QVERIFY(f.open(QIODevice::ReadOnly));
        onnx::ModelProto proto;
        QVERIFY(proto.ParseFromString(f.readAll().toStdString()));
        const onnx::NodeProto* gn = nullptr;
        int custom = 0;
        for (const auto& n : proto.graph().node()) {
            if (n.domain().empty()) continue;
            ++custom;
            gn = &n;
        }
        QCOMPARE(custom, 1);
        QCOMPARE(QString::fromStdString(gn->domain()), QStringLiteral("ai.kiln.plugin.example"));
        QCOMPARE(QString::fromStdString(gn->op_type()), QStringLiteral("GroupNorm"));
        QCOMPARE(gn->input_size(), 3);  // x, gamma, beta
        std::map<std::string, const onnx::AttributeProto*> attrs;
        for (const auto& a : gn->attribute()) attrs[a.name()] = &a;
        QCOMPARE(attrs.size(), size_t{2});
        QCOMPARE(attrs.at("groups")->type(), onnx::AttributeProto::INT);
        QCOMPARE(attrs.at("groups")->i(), int64_t{kiln::test::kGroups});
        QCOMPARE(attrs.at("epsilon")->type(), onnx::AttributeProto::FLOAT);
        QCOMPARE(attrs.at("epsilon")->f(), static_cast<float>(kiln::test::kEpsilon));
        int64_t version = 0;
        for (const auto& o : proto.opset_import())
            if (o.domain() == "ai.kiln.plugin.example") version = o.version();
        QCOMPARE(version, int64_t{1});
        // The saved gamma and beta are the node's initializers.
        std::map<std::string, std::vector<float>> inits;
        for (const auto& t : proto.graph().initializer()) inits[t.name()] = initializerValues(t);
        QVERIFY(inits.count(gn->input(1)) && inits.count(gn->input(2)));
        QCOMPARE(inits.at(gn->input(1)), m_saved.gamma);
        QCOMPARE(inits.at(gn->input(2)), m_saved.beta);
    }

    // Without --json the warning goes to stderr, after the parity line on stdout.
    void warningOnStderr() {
        const Run r = exportModel({"--plugin", kPlugin, "--formats", "onnx", "--version", "2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("Parity: largest difference"), qPrintable(r.out));
        QVERIFY2(r.err.contains("kiln-export: warning: node \"gn\" runs the plugin operation example.GroupNorm"),
                 qPrintable(r.err));
        QVERIFY(QFileInfo::exists(m_dir.filePath("repo/gn/2/model.onnx")));
    }

    // Nothing of the plugin's without it: the export stops before writing, naming the node and
    // the operation.
    void withoutThePluginTheNodeIsNamed() {
        const Run r = exportModel({"--formats", "onnx", "--version", "3"});
        QCOMPARE(r.exitCode, 2);
        // The file and line of the node, the node, the operation and where the plugin may go.
        QVERIFY2(r.err.contains("gn_model.kiln:4: ") && r.err.contains("\"gn\" uses the plugin operation example.GroupNorm, which no "
                                                                       "loaded plugin provides") &&
                     r.err.contains(m_home + "/kiln/plugins"),
                 qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(m_dir.filePath("repo/gn/3")));
    }

    void savedModelRefusesThePluginNode() {
        const Run r = exportModel({"--plugin", kPlugin, "--formats", "savedmodel", "--version", "4"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("\"gn\"") && r.err.contains("example.GroupNorm"), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(m_dir.filePath("repo/gn/4")));
    }

    void missingPluginPathIsRefused() {
        const QString missing = m_dir.filePath("no_such_plugin.so");
        const Run r = exportModel({"--plugin", missing, "--formats", "onnx", "--version", "5"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith("kiln-export: ") && r.err.contains(missing), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestKilnExportPlugin)
#include "tst_kiln_export_plugin.moc"
