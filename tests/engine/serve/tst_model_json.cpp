// SPDX-License-Identifier: Apache-2.0
// kiln-model.json against a model's signature: public names and per-channel preprocessing reach
// the signature, and each mistake (an input named twice, preprocessing for an input that takes no
// images, the wrong number of channel values) is an error naming the field.
// kiln-test-libs: kiln_serve kiln_train kiln_io kiln_data kiln_store kiln_exec kiln_optim kiln_ops kiln_kernels kiln_graph kiln_core
#include <QtTest>

#include "engine/serve/servable.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;

namespace {

TensorSpec spec(const std::string& name, std::vector<int64_t> shape) {
    TensorSpec s;
    s.name = name;
    s.shape = std::move(shape);
    return s;
}

// A feature input, a grey picture input ([batch, height, width]) and a colour one.
ModelSignature signature() {
    ModelSignature s;
    s.inputs.push_back(spec("features", {-1, 3}));
    s.inputs.push_back(spec("grey", {-1, 4, 5}));
    s.inputs.push_back(spec("colour", {-1, 4, 5, 3}));
    s.outputs.push_back(spec("y", {-1, 2}));
    return s;
}

}  // namespace

class TestModelJson : public QObject {
    Q_OBJECT
private slots:
    void namesAndPreprocessing() {
        ModelSignature sig = signature();
        const auto j = nlohmann::json::parse(R"({
            "inputs": [{"name": "f", "node": "features"},
                       {"name": "grey", "preprocessing": {"mean": 0.5, "std": 0.25}},
                       {"name": "colour", "preprocessing": {"scale": 0.1, "mean": [1, 2, 3]}}],
            "outputs": [{"name": "probs", "node": "y", "activation": "softmax"}]})");
        const Status st = applyModelJson(j, "m/kiln-model.json", sig);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
        QCOMPARE(sig.inputs.size(), size_t(3));
        QCOMPARE(sig.inputs[0].name, std::string("f"));
        QCOMPARE(sig.inputs[1].image.mean, std::vector<float>({0.5f}));
        QCOMPARE(sig.inputs[1].image.std, std::vector<float>({0.25f}));
        QCOMPARE(sig.inputs[2].image.mean, std::vector<float>({1.0f, 2.0f, 3.0f}));
        QCOMPARE(sig.inputs[2].image.scale, 0.1f);
        QCOMPARE(sig.outputs[0].name, std::string("probs"));
        QVERIFY(sig.scores == ModelSignature::Scores::Identity);
        // One value stands for every channel.
        ModelSignature sig2 = signature();
        QVERIFY(applyModelJson(nlohmann::json::parse(R"({"preprocessing": {"colour": {"std": 2}}})"), "m", sig2).ok());
        QCOMPARE(sig2.inputs[2].image.std, std::vector<float>({2.0f, 2.0f, 2.0f}));
    }

    void mistakes_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("words");
        QTest::newRow("input named twice")
            << R"({"inputs": [{"name": "a", "node": "grey"}, {"name": "grey"}, {"name": "colour"}]})"
            << "inputs[1]"
            << "a second time";
        QTest::newRow("preprocessing of a feature input")
            << R"({"inputs": [{"name": "features", "preprocessing": {"mean": 1}}, {"name": "grey"}, {"name": "colour"}]})"
            << "inputs[0].preprocessing"
            << "image inputs only";
        QTest::newRow("top-level preprocessing of a feature input")
            << R"({"preprocessing": {"features": {"scale": 2}}})"
            << "preprocessing.features"
            << "[3]";
        QTest::newRow("wrong channel count")
            << R"({"preprocessing": {"colour": {"mean": [1, 2]}}})"
            << "preprocessing.colour.mean"
            << "3 values";
        QTest::newRow("std not positive")
            << R"({"preprocessing": {"grey": {"std": 0}}})"
            << "preprocessing.grey.std"
            << "positive";
        QTest::newRow("unknown input") << R"({"inputs": [{"name": "nope"}, {"name": "grey"}, {"name": "colour"}]})"
                                       << "inputs[0]"
                                       << "not a model input";
    }
    void mistakes() {
        QFETCH(QString, json);
        QFETCH(QString, field);
        QFETCH(QString, words);
        ModelSignature sig = signature();
        const Status st = applyModelJson(nlohmann::json::parse(json.toStdString()), "m/kiln-model.json", sig);
        QVERIFY(!st.ok());
        const QString message = QString::fromStdString(st.error().message);
        QVERIFY2(message.startsWith("m/kiln-model.json: " + field + ": "), qPrintable(message));
        QVERIFY2(message.contains(words), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestModelJson)
#include "tst_model_json.moc"
