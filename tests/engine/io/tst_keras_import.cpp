// SPDX-License-Identifier: Apache-2.0
// The Keras reader against real Keras: models built and saved by Keras 3 (keras_models.py, run with
// the project's Python environment) and by Keras 2 (tf_keras, keras2_models.py) as .keras and as
// legacy .h5 are imported, run by Kiln on the same inputs and compared with Keras's own
// predictions (models nested three deep, a nested model called twice and TimeDistributed layers
// too; Bidirectional(LSTM) and TimeDistributed(Conv2D) become placeholders keeping their weights);
// damaged files give errors naming the file and the JSON or HDF5 path. Skips when the Python environment or Keras is missing.
// kiln-test-labels: interop
// kiln-test-timeout: 900
#include <QtTest>

#include <QDir>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <utility>

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
    QString m_keras2Skip;  // why the Keras 2 (tf_keras) models are missing; empty when made

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
        // Keras 2 models with TFOpLambda layers, from tf_keras when the environment has it; their
        // entries join the manifest with the folder in their file names.
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("tf_keras")));
        switch (kiln::test::makeKerasModels(path(QStringLiteral("tf_keras")), {}, &log, QStringLiteral("keras2_models.py"))) {
        case kiln::test::KerasFixtures::NoPython: m_keras2Skip = QStringLiteral("the Python environment is not available"); break;
        case kiln::test::KerasFixtures::NoKeras: m_keras2Skip = QStringLiteral("tf_keras (Keras 2) is not installed in the Python environment"); break;
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: {
            json k2 = json::parse(readBytes(path(QStringLiteral("tf_keras/manifest.json"))));
            for (auto m : k2["models"]) {
                for (auto* side : {&m["inputs"], &m["outputs"]})
                    for (auto& f : *side) f["file"] = "tf_keras/" + f["file"].get<std::string>();
                m_manifest["models"].push_back(m);
            }
            qInfo("tf_keras %s", k2["keras_version"].get<std::string>().c_str());
            break;
        }
        }
    }

    void predictionsMatchKeras_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("ext");
        for (const char* name : {"cnn", "two_inputs", "separable", "embedding", "sequence_pool", "nested", "shared", "mobilenet_v2", "normalizers", "normalizer_axes", "stochastic_depth"})
            for (const char* ext : {"keras", "h5"}) QTest::newRow(qPrintable(QStringLiteral("%1.%2").arg(name, ext))) << QString(name) << QString(ext);
        // The legacy layout of Keras 2 / tf.keras.
        for (const char* name : {"cnn", "two_inputs", "nested"})
            QTest::newRow(qPrintable(QStringLiteral("%1.keras2.h5").arg(name))) << QString(name) << QStringLiteral("keras2.h5");
        // Written by Keras 2 itself (tf_keras): a small CNN with a nested Sequential block, and a model
        // with TFOpLambda layers, each as legacy .h5 and as tf_keras's own .keras.
        for (const char* name : {"tf_cnn", "oplambda"})
            for (const char* ext : {"tf_keras.h5", "tf_keras.keras"})
                QTest::newRow(qPrintable(QStringLiteral("%1.%2").arg(name, ext))) << QString(name) << QString(ext);
    }
    void predictionsMatchKeras() {
        QFETCH(QString, name);
        QFETCH(QString, ext);
        const bool tfKeras = ext.startsWith(QLatin1String("tf_keras"));
        if (tfKeras && !m_keras2Skip.isEmpty()) QSKIP(qPrintable(m_keras2Skip));
        io::ImportedModel m;
        std::string why;
        const QString file = tfKeras ? path("tf_keras/" + name + "." + ext) : path(name + "." + ext);
        const auto result = runAndCompare(name.toStdString(), file, &why, &m);
        QVERIFY2(result, why.c_str());
        const double worst = *result;
        qInfo("%s.%s: max |Kiln - Keras| = %.3g over %zu Kiln nodes", qPrintable(name), qPrintable(ext), worst, m.graph.nodes.size());
        QVERIFY2(worst <= (tfKeras ? 1e-5 : 1e-4), qPrintable(QString::number(worst)));
        QVERIFY(m.placeholders.empty());
        QCOMPARE(m.format, std::string("keras"));
        QVERIFY2(m.producer.rfind(ext.startsWith("keras2") || ext.startsWith("tf_keras") ? "Keras 2" : "Keras 3", 0) == 0, m.producer.c_str());
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

    void stochasticDepthAndNormalization_data() {
        QTest::addColumn<QString>("ext");
        QTest::newRow("keras") << QStringLiteral("keras");
        QTest::newRow("h5") << QStringLiteral("h5");
    }
    void stochasticDepthAndNormalization() {
        QFETCH(QString, ext);
        // Dropout's noise_shape: null becomes -1, 1 stays, the channel count stays as the axis's size.
        auto sd = io::loadKeras(path("stochastic_depth." + ext).toStdString());
        QVERIFY2(sd.ok(), sd.ok() ? "" : sd.error().toString().c_str());
        QCOMPARE(sd->graph.node("drop_sample")->attrs.getInts("noise_shape"), (std::vector<int64_t>{-1, 1, 1, 1}));
        QCOMPARE(sd->graph.node("drop_channel")->attrs.getInts("noise_shape"), (std::vector<int64_t>{-1, 1, 1, -1}));
        QCOMPARE(sd->graph.node("drop_sample")->attrs.getFloat("rate"), 0.5);
        QVERIFY(ops::analyzeModel(sd->graph).ok());
        for (const auto& map : sd->mapping)
            if (map.sourceName == "drop_sample") QVERIFY2(map.reason.empty(), map.reason.c_str());

        // Normalization with axis=None and invert=True: Kiln's per-channel statistics.
        auto nm = io::loadKeras(path("normalizers." + ext).toStdString());
        QVERIFY2(nm.ok(), nm.ok() ? "" : nm.error().toString().c_str());
        QVERIFY(nm->placeholders.empty());
        for (const char* n : {"norm_all", "denorm", "denorm_adapted", "denorm_all"}) QCOMPARE(nm->graph.node(n)->op, std::string("Normalization"));
        // denorm: mean 0.5, variance 4 -> y = 0.5 + 2x = (x - (-0.25)) / sqrt(0.25).
        const Tensor* mean = nullptr;
        const Tensor* var = nullptr;
        for (const auto& w : nm->weights) {
            if (w.name == "denorm/mean") mean = &w.tensor;
            if (w.name == "denorm/variance") var = &w.tensor;
        }
        QVERIFY(mean && var);
        QCOMPARE(mean->data<float>()[0], -0.25f);
        QCOMPARE(var->data<float>()[0], 0.25f);
        bool noted = false;
        for (const auto& map : nm->mapping)
            if (map.sourceName == "denorm_all") noted = map.reason.find("invert=True") != std::string::npos && map.reason.find("axis None") != std::string::npos;
        QVERIFY(noted);
    }

    // Normalization over rows, (row, column) cells, and rows and channels of an image: Kiln's
    // per-channel Normalization on the values flattened from the first kept axis on, with the
    // statistics repeated over the other axes (the numbers are checked in predictionsMatchKeras).
    void normalizationOnOtherAxes_data() {
        QTest::addColumn<QString>("ext");
        QTest::newRow("keras") << QStringLiteral("keras");
        QTest::newRow("h5") << QStringLiteral("h5");
    }
    void normalizationOnOtherAxes() {
        QFETCH(QString, ext);
        auto m = io::loadKeras(path("normalizer_axes." + ext).toStdString());
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QVERIFY(m->placeholders.empty());
        const io::NodeMapping* rows = nullptr;
        for (const auto& map : m->mapping)
            if (map.sourceName == "norm_rows") rows = &map;
        QVERIFY(rows);
        QCOMPARE(rows->kilnNodes, (std::vector<std::string>{"norm_rows_flatten", "norm_rows", "norm_rows_restore"}));
        QVERIFY2(rows->reason.find("axis (1)") != std::string::npos, rows->reason.c_str());
        QCOMPARE(m->graph.node("norm_rows_flatten")->attrs.getInts("target_shape"), std::vector<int64_t>{90});
        QCOMPARE(m->graph.node("norm_rows_restore")->attrs.getInts("target_shape"), (std::vector<int64_t>{6, 5, 3}));
        // One statistic per value of a sample; row r's statistic in each of its 15 values.
        const Tensor* mean = nullptr;
        for (const auto& w : m->weights)
            if (w.name == "norm_rows/mean") mean = &w.tensor;
        QVERIFY(mean);
        QCOMPARE(mean->shape(), Shape({90}));
        for (int64_t r = 0; r < 6; ++r)
            for (int64_t k = 1; k < 15; ++k) QCOMPARE(mean->data<float>()[r * 15 + k], mean->data<float>()[r * 15]);
        QVERIFY(mean->data<float>()[0] != mean->data<float>()[15]);
        // The cells' statistics from the config: mean of cell (row 1, column 2) is the 8th of 30.
        const Tensor* cells = nullptr;
        for (const auto& w : m->weights)
            if (w.name == "norm_cells/mean") cells = &w.tensor;
        QVERIFY(cells);
        QCOMPARE(cells->shape(), Shape({90}));
        const float want = static_cast<float>(-1.0 + 7 * 2.0 / 29);
        for (int ch = 0; ch < 3; ++ch) QVERIFY(std::fabs(cells->data<float>()[(1 * 5 + 2) * 3 + ch] - want) < 1e-6f);
    }

    // A layer Kiln cannot run in the middle of a Keras 2 model, whose config declares its output
    // shape (Lambda's output_shape): only that layer is a placeholder; the layers after it map and
    // the graph analyses.
    void placeholderInTheMiddle_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QString>("after");
        QTest::addColumn<QString>("afterOp");
        QTest::addColumn<QString>("ext");
        for (const char* ext : {"tf_keras.h5", "tf_keras.keras"}) {
            QTest::newRow(qPrintable(QStringLiteral("functional %1").arg(ext)))
                << QStringLiteral("lambda_middle") << QStringLiteral("rows") << QStringLiteral("conv2") << QStringLiteral("Conv2D") << QString(ext);
            QTest::newRow(qPrintable(QStringLiteral("sequential %1").arg(ext)))
                << QStringLiteral("lambda_sequential") << QStringLiteral("running") << QStringLiteral("out") << QStringLiteral("Dense") << QString(ext);
        }
    }
    void placeholderInTheMiddle() {
        if (!m_keras2Skip.isEmpty()) QSKIP(qPrintable(m_keras2Skip));
        QFETCH(QString, name);
        QFETCH(QString, layer);
        QFETCH(QString, after);
        QFETCH(QString, afterOp);
        QFETCH(QString, ext);
        io::ImportOptions opt;
        opt.placeholders = true;
        auto m = io::loadKeras(path("tf_keras/" + name + "." + ext).toStdString(), opt);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->placeholders, std::vector<std::string>{layer.toStdString()});
        const Node* ph = m->graph.node(layer.toStdString());
        QCOMPARE(ph->attrs.getString("keras_class"), std::string("Lambda"));
        QCOMPARE(m->graph.node(after.toStdString())->op, afterOp.toStdString());
        auto info = ops::analyzeModel(m->graph);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        // The weights of the layers after it are there, with their shapes.
        auto params = exec::ParamStore::create(*info, 1);
        QVERIFY(io::applyWeights(*m, params).ok());
    }

    // tf_keras's .keras: the weight groups are named after the layers' classes (conv2d, conv2d_1,
    // the nested block's own conv2d); each layer still gets its own weights, as in the .h5.
    void tfKerasArchiveWeights() {
        if (!m_keras2Skip.isEmpty()) QSKIP(qPrintable(m_keras2Skip));
        io::ImportOptions opt;
        opt.placeholders = true;
        auto archive = io::loadKeras(path("tf_keras/tf_cnn.tf_keras.keras").toStdString(), opt);
        QVERIFY2(archive.ok(), archive.ok() ? "" : archive.error().toString().c_str());
        auto h5 = io::loadKeras(path("tf_keras/tf_cnn.tf_keras.h5").toStdString(), opt);
        QVERIFY2(h5.ok(), h5.ok() ? "" : h5.error().toString().c_str());
        QVERIFY2(archive->producer.rfind("Keras 2.", 0) == 0, archive->producer.c_str());
        QVERIFY(archive->graph.node("block/pw"));
        QCOMPARE(archive->weights.size(), h5->weights.size());
        std::map<std::string, std::vector<int64_t>> shapes;
        for (const auto& w : archive->weights) shapes[w.name] = w.tensor.shape().dims();
        QCOMPARE(shapes["stem/kernel"], (std::vector<int64_t>{3, 3, 3, 8}));
        QCOMPARE(shapes["top_conv/kernel"], (std::vector<int64_t>{3, 3, 12, 16}));
        QCOMPARE(shapes["block/pw/kernel"], (std::vector<int64_t>{1, 1, 8, 12}));
        QCOMPARE(shapes["probs/kernel"], (std::vector<int64_t>{10, 4}));
        for (const auto& w : h5->weights) {
            const auto it = std::find_if(archive->weights.begin(), archive->weights.end(), [&](const auto& a) { return a.name == w.name; });
            QVERIFY2(it != archive->weights.end(), w.name.c_str());
            QCOMPARE(it->tensor.shape().dims(), w.tensor.shape().dims());
            const std::span<const float> want = w.tensor.f32(), got = std::as_const(it->tensor).f32();
            QVERIFY2(std::equal(want.begin(), want.end(), got.begin(), got.end()), w.name.c_str());
        }
    }

    void tfOpLambdaLayers() {
        if (!m_keras2Skip.isEmpty()) QSKIP(qPrintable(m_keras2Skip));
        io::ImportOptions opt;
        opt.placeholders = true;
        auto m = io::loadKeras(path("tf_keras/oplambda.tf_keras.h5").toStdString(), opt);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QVERIFY(m->placeholders.empty());
        // Keras 2 names the layers after the functions: each maps to the Kiln op computing it.
        const std::vector<std::pair<const char*, const char*>> want{
            {"tf.math.multiply", "Rescaling"},          {"tf.__operators__.add_1", "Add"},
            {"tf.math.reduce_mean", "Reshape"},         {"tf.math.reduce_mean_pool", "GlobalAveragePooling2D"},
            {"tf.math.multiply_1", "Multiply"},         {"tf.math.subtract", "Rescaling"},
            {"tf.nn.leaky_relu", "LeakyReLU"},          {"tf.math.truediv", "Rescaling"},
            {"tf.clip_by_value", "Clip"},               {"tf.math.subtract_1", "Subtract"},
            {"tf.reshape", "Reshape"},                  {"tf.math.reduce_max", "GlobalMaxPooling2D"},
            {"tf.concat", "Concatenate"},               {"tf.nn.softmax", "Softmax"},
            {"tf.nn.gelu", "GELU"},                     {"tf.nn.silu", "SiLU"}};
        for (const auto& [node, op] : want) {
            const Node* n = m->graph.node(node);
            QVERIFY2(n, node);
            QCOMPARE(n->op, std::string(op));
        }
        // 2.0 - x: scale -1, offset 2; x / 4: scale 0.25.
        QCOMPARE(m->graph.node("tf.math.subtract")->attrs.getFloat("scale"), -1.0);
        QCOMPARE(m->graph.node("tf.math.subtract")->attrs.getFloat("offset"), 2.0);
        QCOMPARE(m->graph.node("tf.math.truediv")->attrs.getFloat("scale"), 0.25);
        // Tensors passed by keyword (y=) are inputs, in order.
        QCOMPARE(m->graph.node("tf.math.subtract_1")->inputs, (std::vector<std::string>{"tf.clip_by_value", "conv"}));

        // A function Kiln has no op for: a placeholder naming it, or an error naming it.
        auto u = io::loadKeras(path("tf_keras/oplambda_unknown.tf_keras.h5").toStdString(), opt);
        QVERIFY2(u.ok(), u.ok() ? "" : u.error().toString().c_str());
        QVERIFY(!u->placeholders.empty());
        QCOMPARE(u->placeholders.front(), std::string("tf.math.cumsum"));
        QCOMPARE(u->graph.node("tf.math.cumsum")->attrs.getString("keras_class"), std::string("TFOpLambda(tf.math.cumsum)"));
        const Node* slice = u->graph.node("tf.__operators__.getitem");
        QVERIFY(slice);
        QCOMPARE(slice->attrs.getString("keras_class"), std::string("SlicingOpLambda"));
        QCOMPARE(slice->inputs, std::vector<std::string>{"tf.math.cumsum"});
        auto strict = io::loadKeras(path("tf_keras/oplambda_unknown.tf_keras.h5").toStdString());
        QVERIFY(!strict.ok());
        QCOMPARE(strict.error().code, ErrorCode::UnknownOp);
        QCOMPARE(strict.error().node, std::string("tf.math.cumsum"));
        QVERIFY2(strict.error().message.find("tf.math.cumsum") != std::string::npos, strict.error().message.c_str());
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

    // GlobalAveragePooling1D after an Embedding with mask_zero: Keras averages the unmasked
    // positions only, which Kiln cannot. Keras 3 writes the mask as a NotEqual layer, which Kiln
    // has not, so the import fails there; with placeholders for what Kiln cannot compute, the
    // pooling becomes one too, its reason naming the mask.
    void maskedPoolingRefused_data() {
        QTest::addColumn<QString>("ext");
        QTest::newRow("keras") << QStringLiteral("keras");
        QTest::newRow("h5") << QStringLiteral("h5");
    }
    void maskedPoolingRefused() {
        QFETCH(QString, ext);
        auto strict = io::loadKeras(path("masked_pool." + ext).toStdString());
        QVERIFY(!strict.ok());
        io::ImportOptions opt;
        opt.placeholders = true;
        auto m = io::loadKeras(path("masked_pool." + ext).toStdString(), opt);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QVERIFY(std::find(m->placeholders.begin(), m->placeholders.end(), "mean") != m->placeholders.end());
        bool found = false;
        for (const auto& map : m->mapping)
            if (map.sourceName == "mean") {
                found = true;
                QVERIFY2(map.reason.find("mask_zero=True") != std::string::npos, map.reason.c_str());
            }
        QVERIFY(found);
    }

    // Models nested more than one level deep, a nested model called twice, and TimeDistributed over
    // layers acting on each position's last axis, as Keras 3 (.keras, .h5) and Keras 2 (tf_keras:
    // .h5, .keras) write them (keras_nesting.py): the same predictions as Keras within 1e-5.
    void nestedAndWrappedMatchKeras_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("file");
        for (const char* name : {"deep_nested", "deep_functional", "deep_sequential", "shared_nested", "time_distributed"}) {
            for (const char* ext : {"keras", "h5"})
                QTest::newRow(qPrintable(QStringLiteral("%1.%2").arg(name, ext))) << QString(name) << QStringLiteral("%1.%2").arg(name, ext);
            for (const char* ext : {"tf_keras.h5", "tf_keras.keras"})
                QTest::newRow(qPrintable(QStringLiteral("tf_%1.%2").arg(name, ext)))
                    << QStringLiteral("tf_%1").arg(name) << QStringLiteral("tf_keras/tf_%1.%2").arg(name, ext);
        }
    }
    void nestedAndWrappedMatchKeras() {
        QFETCH(QString, name);
        QFETCH(QString, file);
        if (name.startsWith(QLatin1String("tf_")) && !m_keras2Skip.isEmpty()) QSKIP(qPrintable(m_keras2Skip));
        io::ImportedModel m;
        std::string why;
        const auto worst = runAndCompare(name.toStdString(), path(file), &why, &m);
        QVERIFY2(worst, why.c_str());
        qInfo("%s: max |Kiln - Keras| = %.3g over %zu Kiln nodes", qPrintable(file), *worst, m.graph.nodes.size());
        QVERIFY2(*worst <= 1e-5, qPrintable(QString::number(*worst)));
        QVERIFY(m.placeholders.empty());
        std::map<std::string, std::vector<int64_t>> weights;
        for (const auto& w : m.weights) weights[w.name] = w.tensor.shape().dims();
        auto op = [&](const char* node) { return m.graph.node(node) ? m.graph.node(node)->op : std::string("(none)"); };
        if (name.endsWith(QLatin1String("deep_nested"))) {
            // Three levels: "<model>/<model>/<layer>", each with its own weights.
            QCOMPARE(op("mid/block/block_dense"), std::string("Dense"));
            QCOMPARE(op("mid/block/block_add"), std::string("Add"));
            QCOMPARE(op("mid/core/core_bn"), std::string("BatchNormalization"));
            QCOMPARE(m.graph.node("head")->inputs, std::vector<std::string>{"mid/core/core_dense"});
            QCOMPARE(weights["mid/block/block_dense/kernel"], (std::vector<int64_t>{8, 8}));
            QCOMPARE(weights["mid/mid_dense/kernel"], (std::vector<int64_t>{8, 8}));
            QCOMPARE(weights["mid/core/core_bn/moving_variance"], std::vector<int64_t>{8});
            QCOMPARE(weights["mid/core/core_dense/kernel"], (std::vector<int64_t>{8, 6}));
            QCOMPARE(weights.size(), size_t{12});
        } else if (name.endsWith(QLatin1String("deep_functional"))) {
            // The innermost model called twice inside the middle one: its second call's node in
            // "mid/cell_call2/" shares the first's weights.
            QCOMPARE(m.graph.node("mid/cell_call2/cell_dense")->inputs, std::vector<std::string>{"mid/cell/cell_dense"});
            QCOMPARE(m.graph.node("mid/cell_call2/cell_dense")->shareWeightsWith, std::string("mid/cell/cell_dense"));
            QCOMPARE(m.graph.node("mid/mid_cat")->inputs, (std::vector<std::string>{"mid/cell_call2/cell_dense", "features"}));
            QCOMPARE(weights["mid/cell/cell_dense/kernel"], (std::vector<int64_t>{6, 6}));
            QCOMPARE(weights.size(), size_t{6});
        } else if (name.endsWith(QLatin1String("deep_sequential"))) {
            QCOMPARE(m.graph.node("mid/core/core_dense")->inputs, std::vector<std::string>{"mid/mid_dense"});
            QCOMPARE(m.graph.node("head")->inputs, std::vector<std::string>{"mid/core/core_dense"});
            QCOMPARE(weights["mid/core/core_dense/kernel"], (std::vector<int64_t>{5, 5}));
            QCOMPARE(weights.size(), size_t{8});
        } else if (name.endsWith(QLatin1String("shared_nested"))) {
            // The second call's nodes, models inside it too, share the first call's weights.
            QCOMPARE(m.graph.node("tower_call2/tower_dense")->shareWeightsWith, std::string("tower/tower_dense"));
            QCOMPARE(m.graph.node("tower_call2/inner/inner_dense")->shareWeightsWith, std::string("tower/inner/inner_dense"));
            QCOMPARE(m.graph.node("tower_call2/inner/inner_norm")->shareWeightsWith, std::string("tower/inner/inner_norm"));
            QCOMPARE(m.graph.node("tower_call2/tower_dense")->inputs, std::vector<std::string>{"right"});
            QCOMPARE(m.graph.node("difference")->inputs, (std::vector<std::string>{"tower/inner/inner_norm", "tower_call2/inner/inner_norm"}));
            for (const auto& [w, dims] : weights) QVERIFY2(w.rfind("tower_call2", 0) != 0, w.c_str());
            QCOMPARE(weights.size(), size_t{8});
            bool second = false;
            for (const auto& map : m.mapping)
                if (map.sourceName == "tower (call 2)") {
                    second = true;
                    QCOMPARE(map.kind, io::NodeMapping::Kind::PassThrough);
                    QVERIFY2(map.reason.find("share the weights of tower/") != std::string::npos, map.reason.c_str());
                }
            QVERIFY(second);
        } else {
            // Each TimeDistributed layer is its layer under the wrapper's name, with the wrapped
            // layer's weights; the Dense on [3, 4, 5] goes through [12, 5] and back.
            QCOMPARE(op("td_proj"), std::string("Dense"));
            QCOMPARE(op("td_drop"), std::string("Dropout"));
            QCOMPARE(op("td_act"), std::string("SiLU"));
            QCOMPARE(op("td_norm"), std::string("LayerNormalization"));
            QCOMPARE(op("td_bn"), std::string("BatchNormalization"));
            QCOMPARE(m.graph.node("td_cell")->inputs, std::vector<std::string>{"td_cell_flatten"});
            QCOMPARE(m.graph.node("td_cell_flatten")->attrs.getInts("target_shape"), (std::vector<int64_t>{12, 5}));
            QCOMPARE(m.graph.node("td_cell_restore")->attrs.getInts("target_shape"), (std::vector<int64_t>{3, 4, 2}));
            QCOMPARE(weights["td_proj/kernel"], (std::vector<int64_t>{4, 6}));
            QCOMPARE(weights["td_cell/kernel"], (std::vector<int64_t>{5, 2}));
            QCOMPARE(weights["td_norm/gamma"], std::vector<int64_t>{6});
            QCOMPARE(weights["per_step/kernel"], (std::vector<int64_t>{6, 7}));
            for (const auto& map : m.mapping)
                if (map.sourceName == "td_proj") QCOMPARE(map.sourceOp, std::string("TimeDistributed(Dense)"));
        }
    }

    // Wrappers Kiln cannot compute: Bidirectional(LSTM) (Kiln has no recurrent layer) and
    // TimeDistributed(Conv2D) (each step convolved on its own) become placeholders naming the
    // wrapped class, keeping every weight tensor of the wrapped layers; without placeholders the
    // import fails naming the layer.
    void wrapperPlaceholders_data() {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("ext");
        QTest::newRow("keras") << QString() << QStringLiteral("keras");
        QTest::newRow("h5") << QString() << QStringLiteral("h5");
        QTest::newRow("tf_keras.h5") << QStringLiteral("tf_keras/tf_") << QStringLiteral("tf_keras.h5");
        QTest::newRow("tf_keras.keras") << QStringLiteral("tf_keras/tf_") << QStringLiteral("tf_keras.keras");
    }
    void wrapperPlaceholders() {
        QFETCH(QString, prefix);
        QFETCH(QString, ext);
        const bool keras2 = !prefix.isEmpty();
        if (keras2 && !m_keras2Skip.isEmpty()) QSKIP(qPrintable(m_keras2Skip));
        io::ImportOptions opt;
        opt.placeholders = true;
        const std::string file = path(prefix + "wrappers." + ext).toStdString();
        auto m = io::loadKeras(file, opt);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QCOMPARE(m->placeholders, std::vector<std::string>{"bilstm"});
        const Node* ph = m->graph.node("bilstm");
        QCOMPARE(ph->op, std::string("Placeholder"));
        QCOMPARE(ph->attrs.getString("keras_class"), std::string("Bidirectional(LSTM)"));
        // The shape the file records, or (Keras 2 records none) the one the LSTM's config gives:
        // 5 steps of 2 x 3 units. The TimeDistributed(Dense) after it maps.
        QCOMPARE(ph->attrs.getInts("output_shape"), (std::vector<int64_t>{5, 6}));
        QCOMPARE(m->graph.node("td_score")->op, std::string("Dense"));
        QVERIFY(ops::analyzeModel(m->graph).ok());
        // Both directions' kernel [6, 12], recurrent kernel [3, 12] and bias [12].
        std::vector<std::vector<int64_t>> kept;
        for (const auto& w : m->weights)
            if (w.name.rfind("bilstm/", 0) == 0) {
                kept.push_back(w.tensor.shape().dims());
                QVERIFY2(w.name.find("forward") != std::string::npos || w.name.find("backward") != std::string::npos, w.name.c_str());
            }
        std::sort(kept.begin(), kept.end());
        QCOMPARE(kept, (std::vector<std::vector<int64_t>>{{3, 12}, {3, 12}, {6, 12}, {6, 12}, {12}, {12}}));
        bool reported = false;
        for (const auto& map : m->mapping)
            if (map.sourceName == "bilstm") {
                reported = true;
                QCOMPARE(map.kind, io::NodeMapping::Kind::Placeholder);
                QCOMPARE(map.sourceOp, std::string("Bidirectional(LSTM)"));
            }
        QVERIFY(reported);
        auto strict = io::loadKeras(file);
        QVERIFY(!strict.ok());
        QCOMPARE(strict.error().code, ErrorCode::UnknownOp);
        QCOMPARE(strict.error().node, std::string("bilstm"));
        QVERIFY2(strict.error().message.find("Bidirectional(LSTM)") != std::string::npos, strict.error().message.c_str());

        const std::string conv = path(prefix + "td_conv." + ext).toStdString();
        auto td = io::loadKeras(conv, opt);
        QVERIFY2(td.ok(), td.ok() ? "" : td.error().toString().c_str());
        QCOMPARE(td->placeholders.front(), std::string("td_conv"));
        QCOMPARE(td->graph.node("td_conv")->attrs.getString("keras_class"), std::string("TimeDistributed(Conv2D)"));
        // The shape from the file, or from the convolution's config: 3 steps of 4 x 4 x 4.
        QCOMPARE(td->graph.node("td_conv")->attrs.getInts("output_shape"), (std::vector<int64_t>{3, 4, 4, 4}));
        QCOMPARE(td->placeholders.size(), size_t{1});
        kept.clear();
        for (const auto& w : td->weights)
            if (w.name.rfind("td_conv/", 0) == 0) kept.push_back(w.tensor.shape().dims());
        QCOMPARE(kept, (std::vector<std::vector<int64_t>>{{3, 3, 2, 4}, {4}}));
        auto strictConv = io::loadKeras(conv);
        QVERIFY(!strictConv.ok());
        QCOMPARE(strictConv.error().node, std::string("td_conv"));
        QVERIFY2(strictConv.error().message.find("TimeDistributed(Conv2D)") != std::string::npos, strictConv.error().message.c_str());
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
