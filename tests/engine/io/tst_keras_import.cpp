// SPDX-License-Identifier: Apache-2.0
// The Keras reader against real Keras: models built and saved by Keras (keras_models.py, run with
// the project's Python environment) as .keras and as legacy .h5 are imported, run by Kiln on the
// same inputs and compared with Keras's own predictions; damaged files give errors naming the file
// and the JSON or HDF5 path. Skips when the Python environment or Keras is missing.
// kiln-test-labels: interop
// kiln-test-timeout: 900
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/keras_import.h"
#include "engine/io/zip_archive.h"
#include "engine/ops/model.h"
#include "tests/engine/io/keras_fixtures.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

std::vector<float> readFloats(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), {});
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

void writeBytes(const QString& path, const std::string& bytes) {
    std::ofstream f(path.toStdString(), std::ios::binary);
    f << bytes;
}

std::string readBytes(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

bool hasParam(const Error& e, const std::string& key, const std::string& value) {
    return e.param(key) == value;
}

}  // namespace

class TestKerasImport : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    json m_manifest;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    const json* model(const std::string& name) const {
        for (const auto& m : m_manifest["models"])
            if (m["name"] == name) return &m;
        return nullptr;
    }

    // Imports `file`, runs it on the manifest's inputs and returns the largest difference from
    // Keras's predictions; nullopt with `why` when a step fails.
    std::optional<double> runAndCompare(const std::string& name, const QString& file, std::string* why, io::ImportedModel* keep = nullptr) {
        const json* m = model(name);
        if (!m) {
            *why = "no model " + name + " in the manifest";
            return std::nullopt;
        }
        io::ImportOptions opt;
        opt.placeholders = true;
        auto imported = io::loadKeras(file.toStdString(), opt);
        if (!imported.ok()) return fail(imported.error(), why);
        auto info = ops::analyzeModel(imported->graph);
        if (!info.ok()) return fail(info.error(), why);
        auto params = exec::ParamStore::create(*info, 1);
        if (auto applied = io::applyWeights(*imported, params); !applied.ok()) return fail(applied.error(), why);
        ThreadPool pool(2);
        exec::CompileOptions copt;
        copt.batch = (*m)["inputs"][0]["shape"][0].get<int64_t>();
        copt.training = false;
        auto plan = exec::Plan::compile(*info, params, copt, pool);
        if (!plan.ok()) return fail(plan.error(), why);
        const auto& ins = (*m)["inputs"];
        const auto& outs = (*m)["outputs"];
        if (ins.size() != imported->inputs.size() || outs.size() != imported->outputs.size()) {
            *why = "the imported model has other inputs or outputs than the Keras one";
            return std::nullopt;
        }
        for (size_t k = 0; k < ins.size(); ++k) {
            auto x = readFloats(path(QString::fromStdString(ins[k]["file"].get<std::string>())));
            std::memcpy((*plan)->input(k), x.data(), x.size() * sizeof(float));
        }
        if (auto fwd = (*plan)->forward(); !fwd.ok()) return fail(fwd.error(), why);
        double worst = 0.0;
        for (size_t k = 0; k < outs.size(); ++k) {
            auto y = readFloats(path(QString::fromStdString(outs[k]["file"].get<std::string>())));
            const Shape s = (*plan)->outputShape(k);
            if (static_cast<size_t>(s.numel()) != y.size()) {
                *why = "output " + std::to_string(k) + " has " + std::to_string(s.numel()) + " values, Keras gave " + std::to_string(y.size());
                return std::nullopt;
            }
            const float* got = (*plan)->output(k);
            for (size_t e = 0; e < y.size(); ++e) {
                const double d = std::fabs(static_cast<double>(got[e]) - y[e]);
                worst = std::isnan(d) ? INFINITY : std::max(worst, d);
            }
        }
        if (keep) *keep = std::move(*imported);
        return worst;
    }
    static std::optional<double> fail(const Error& e, std::string* why) {
        *why = e.toString();
        return std::nullopt;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QString log;
        switch (kiln::test::makeKerasModels(m_dir.path(), {}, &log)) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("Keras is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        m_manifest = json::parse(readBytes(path("manifest.json")));
        qInfo("Keras %s", m_manifest["keras_version"].get<std::string>().c_str());
    }

    void predictionsMatchKeras_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("ext");
        for (const char* name : {"cnn", "two_inputs", "separable", "embedding", "nested", "shared", "mobilenet_v2"})
            for (const char* ext : {"keras", "h5"}) QTest::newRow(qPrintable(QStringLiteral("%1.%2").arg(name, ext))) << QString(name) << QString(ext);
        // The legacy layout of Keras 2 / tf.keras.
        for (const char* name : {"cnn", "two_inputs", "nested"})
            QTest::newRow(qPrintable(QStringLiteral("%1.keras2.h5").arg(name))) << QString(name) << QStringLiteral("keras2.h5");
    }
    void predictionsMatchKeras() {
        QFETCH(QString, name);
        QFETCH(QString, ext);
        io::ImportedModel m;
        std::string why;
        const auto result = runAndCompare(name.toStdString(), path(name + "." + ext), &why, &m);
        QVERIFY2(result, why.c_str());
        const double worst = *result;
        qInfo("%s.%s: max |Kiln - Keras| = %.3g over %zu Kiln nodes", qPrintable(name), qPrintable(ext), worst, m.graph.nodes.size());
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
        QVERIFY(m.placeholders.empty());
        QCOMPARE(m.format, std::string("keras"));
        QVERIFY2(m.producer.rfind(ext == "keras2.h5" ? "Keras 2" : "Keras 3", 0) == 0, m.producer.c_str());
        // Every layer is accounted for in the mapping.
        for (const auto& map : m.mapping) QVERIFY2(!map.kilnNodes.empty(), map.sourceName.c_str());
    }

    void namesAndStructure() {
        io::ImportOptions opt;
        opt.placeholders = true;
        // Keras names are kept; the activation argument stays on the layer when Kiln's layer has it.
        auto cnn = io::loadKeras(path("cnn.keras").toStdString(), opt);
        QVERIFY2(cnn.ok(), cnn.ok() ? "" : cnn.error().toString().c_str());
        QCOMPARE(cnn->inputs, std::vector<std::string>{"image"});
        QCOMPARE(cnn->graph.outputs, std::vector<std::string>{"probs"});
        QCOMPARE(cnn->graph.node("probs")->attrs.getString("activation"), std::string("softmax"));
        QCOMPARE(cnn->graph.node("conv1")->op, std::string("Conv2D"));
        QVERIFY(!cnn->graph.node("conv1")->attrs.getBool("use_bias"));
        QCOMPARE(cnn->graph.node("conv2")->attrs.getInts("strides"), (std::vector<int64_t>{2, 2}));

        // SeparableConv2D: a depthwise and a pointwise node; swish follows as its own node.
        auto sep = io::loadKeras(path("separable.h5").toStdString(), opt);
        QVERIFY(sep.ok());
        QCOMPARE(sep->graph.node("sep_depthwise")->op, std::string("DepthwiseConv2D"));
        QCOMPARE(sep->graph.node("sep_pointwise")->op, std::string("Conv2D"));
        QCOMPARE(sep->graph.node("sep_pointwise")->attrs.getInts("kernel_size"), (std::vector<int64_t>{1, 1}));
        QCOMPARE(sep->graph.node("sep_activation")->op, std::string("SiLU"));
        QCOMPARE(sep->graph.node("pad")->attrs.getInts("padding"), (std::vector<int64_t>{1, 2, 0, 1}));
        bool mapped = false;
        for (const auto& map : sep->mapping)
            if (map.sourceName == "sep") {
                mapped = true;
                QCOMPARE(map.sourceOp, std::string("SeparableConv2D"));
                QCOMPARE(map.kilnNodes, (std::vector<std::string>{"sep_depthwise", "sep_pointwise", "sep_activation"}));
            }
        QVERIFY(mapped);

        // Keras 2's hard_sigmoid is clip(0.2·x + 0.5, 0, 1) (Keras 3's is relu6(x + 3) / 6): a file
        // written by Keras 2 gets a Rescaling and a Clip.
        auto sep2 = io::loadKeras(path("separable.keras2.h5").toStdString(), opt);
        QVERIFY2(sep2.ok(), sep2.ok() ? "" : sep2.error().toString().c_str());
        QCOMPARE(sep2->graph.node("hsig")->op, std::string("Clip"));
        QCOMPARE(sep2->graph.node("hsig")->inputs, std::vector<std::string>{"hsig_scale"});
        QCOMPARE(sep2->graph.node("hsig_scale")->attrs.getFloat("scale"), 0.2);
        QCOMPARE(sep2->graph.node("hsig_scale")->attrs.getFloat("offset"), 0.5);
        QCOMPARE(sep->graph.node("hsig")->op, std::string("HardSigmoid"));

        // A nested model is flattened into "<model>/<layer>" nodes.
        auto nested = io::loadKeras(path("nested.keras").toStdString(), opt);
        QVERIFY(nested.ok());
        QVERIFY(nested->graph.node("block/inner_dense"));
        QCOMPARE(nested->graph.node("head")->inputs, std::vector<std::string>{"block/inner_out"});

        // A layer called twice: the second call's node shares the first one's weights.
        auto shared = io::loadKeras(path("shared.keras").toStdString(), opt);
        QVERIFY(shared.ok());
        QCOMPARE(shared->graph.node("shared_dense_call2")->shareWeightsWith, std::string("shared_dense"));
        QCOMPARE(shared->graph.node("shared_dense_call2_activation")->op, std::string("SiLU"));
        for (const auto& w : shared->weights) QVERIFY2(w.name.rfind("shared_dense_call2", 0) != 0, w.name.c_str());

        // Embedding reads integer ids.
        auto emb = io::loadKeras(path("embedding.h5").toStdString(), opt);
        QVERIFY(emb.ok());
        QCOMPARE(emb->graph.node("tokens")->attrs.getString("dtype"), std::string("int32"));
    }

    void unknownLayerBecomesPlaceholder_data() {
        QTest::addColumn<QString>("ext");
        QTest::newRow("keras") << QStringLiteral("keras");
        QTest::newRow("h5") << QStringLiteral("h5");
    }
    void unknownLayerBecomesPlaceholder() {
        QFETCH(QString, ext);
        io::ImportOptions opt;
        opt.placeholders = true;
        auto m = io::loadKeras(path("unknown." + ext).toStdString(), opt);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->placeholders, std::vector<std::string>{"conv1d"});
        const Node* ph = m->graph.node("conv1d");
        QCOMPARE(ph->op, std::string("Placeholder"));
        QCOMPARE(ph->attrs.getString("keras_class"), std::string("Conv1D"));
        QCOMPARE(json::parse(ph->attrs.getString("keras_config"))["filters"].get<int>(), 5);
        // The output shape comes from the file, so the layers after it still map and analyse.
        QCOMPARE(ph->attrs.getInts("output_shape"), (std::vector<int64_t>{6, 5}));
        QVERIFY(ops::analyzeModel(m->graph).ok());
        // Its weights are kept, not dropped.
        int kept = 0;
        for (const auto& w : m->weights)
            if (w.name.rfind("conv1d/", 0) == 0) ++kept;
        QCOMPARE(kept, 2);
        // Running it refuses and names the placeholder.
        auto info = ops::analyzeModel(m->graph);
        auto params = exec::ParamStore::create(*info, 1);
        ThreadPool pool(1);
        exec::CompileOptions copt;
        copt.batch = 2;
        copt.training = false;
        auto plan = exec::Plan::compile(*info, params, copt, pool);
        QVERIFY(!plan.ok());
        QVERIFY2(plan.error().message.find("conv1d (Keras Conv1D)") != std::string::npos, plan.error().message.c_str());
        // Without placeholders the import fails and names the layer.
        auto strict = io::loadKeras(path("unknown." + ext).toStdString());
        QVERIFY(!strict.ok());
        QCOMPARE(strict.error().node, std::string("conv1d"));
        QCOMPARE(strict.error().code, ErrorCode::UnknownOp);
    }

    void damagedFiles() {
        // A config that is not JSON.
        auto badJson = io::loadKeras(path("bad_json.keras").toStdString());
        QVERIFY(!badJson.ok());
        QCOMPARE(badJson.error().code, ErrorCode::ParseError);
        QCOMPARE(badJson.error().file, path("bad_json.keras").toStdString());
        QVERIFY(hasParam(badJson.error(), "json_path", "config.json"));

        // A field of the wrong type: the JSON path and the layer.
        auto badField = io::loadKeras(path("bad_field.keras").toStdString());
        QVERIFY(!badField.ok());
        QVERIFY(hasParam(badField.error(), "json_path", "config.layers[1].config.filters"));
        QCOMPARE(badField.error().node, std::string("conv1"));

        // A truncated archive.
        const std::string archive = readBytes(path("cnn.keras"));
        writeBytes(path("truncated.keras"), archive.substr(0, archive.size() / 2));
        auto truncated = io::loadKeras(path("truncated.keras").toStdString());
        QVERIFY(!truncated.ok());
        QCOMPARE(truncated.error().code, ErrorCode::ParseError);
        QCOMPARE(truncated.error().file, path("truncated.keras").toStdString());

        // Damaged weights inside the archive: the zip member's checksum.
        std::string flipped = archive;
        for (size_t k = flipped.size() / 2; k < flipped.size() / 2 + 32; ++k) flipped[k] = static_cast<char>(flipped[k] ^ 0x5a);
        writeBytes(path("flipped.keras"), flipped);
        auto damaged = io::loadKeras(path("flipped.keras").toStdString());
        QVERIFY(!damaged.ok());
        QVERIFY(hasParam(damaged.error(), "zip_member", "model.weights.h5"));

        // HDF5 files that are not Keras models: any HDF5 data, and a weights-only file.
        auto plain = io::loadKeras(path("plain.h5").toStdString());
        QVERIFY(!plain.ok());
        QVERIFY(hasParam(plain.error(), "hdf5_path", "/@model_config"));
        auto weights = io::readZipMember(path("cnn.keras").toStdString(), "model.weights.h5", 1 << 26);
        QVERIFY(weights.ok());
        writeBytes(path("weights_only.h5"), *weights);
        auto weightsOnly = io::loadKeras(path("weights_only.h5").toStdString());
        QVERIFY(!weightsOnly.ok());
        QVERIFY2(weightsOnly.error().message.find("only weights") != std::string::npos, weightsOnly.error().message.c_str());

        // A truncated legacy model.
        const std::string h5 = readBytes(path("cnn.h5"));
        for (size_t cut : {size_t{100}, h5.size() / 2, h5.size() - 10}) {
            writeBytes(path("cut.h5"), h5.substr(0, cut));
            auto cutModel = io::loadKeras(path("cut.h5").toStdString());
            QVERIFY(!cutModel.ok());
            QCOMPARE(cutModel.error().file, path("cut.h5").toStdString());
        }

        // Files of no model format at all.
        writeBytes(path("notes.txt"), "hello");
        auto format = io::detectModelFile(path("notes.txt").toStdString());
        QVERIFY(!format.ok());
        QCOMPARE(format.error().code, ErrorCode::UnsupportedFormat);
        auto missing = io::loadModelFile(path("absent.keras").toStdString());
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
    }

    void formatDetection() {
        QCOMPARE(*io::detectModelFile(path("cnn.keras").toStdString()), io::ModelFileFormat::KerasArchive);
        QCOMPARE(*io::detectModelFile(path("cnn.h5").toStdString()), io::ModelFileFormat::KerasH5);
        // By content, whatever the name says.
        writeBytes(path("renamed.onnx"), readBytes(path("cnn.h5")));
        QCOMPARE(*io::detectModelFile(path("renamed.onnx").toStdString()), io::ModelFileFormat::KerasH5);
        auto m = io::loadModelFile(path("renamed.onnx").toStdString());
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->format, std::string("keras"));
    }
};

QTEST_GUILESS_MAIN(TestKerasImport)
#include "tst_keras_import.moc"
