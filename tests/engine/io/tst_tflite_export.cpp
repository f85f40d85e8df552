// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite export without TensorFlow: the file is a flatbuffer with TFLite's "TFL3"
// identifier whose root table passes flatbuffers' structural verifier, the repository writes and
// lists model.tflite when asked, nodes TFLite cannot express are refused with their names, and an
// int8 export carries int8 tensors with the expected scales.
#include <QtTest>

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>

#include "engine/io/model_repository.h"
#include "engine/io/project.h"
#include "engine/io/tflite_export.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::io;

namespace {

Result<std::string> exportText(const std::string& nodes, const std::string& outputs) {
    auto p = parseProject(R"({"format":"kiln-project","version":2,"name":"t","graph":{"nodes":[)" + nodes +
                              R"(],"outputs":[)" + outputs + "]}}",
                          "t.kiln");
    if (!p.ok()) return p.error();
    KILN_ASSIGN(ops::ModelInfo model, ops::analyzeModel(p->graph));
    auto params = exec::ParamStore::create(model, 3);
    return exportTflite(model, params, {});
}

void expectRefused(const std::string& nodes, const std::string& node, const std::string& words) {
    auto r = exportText(nodes, R"("out")");
    QVERIFY2(!r.ok(), "export should fail");
    QCOMPARE(r.error().code, ErrorCode::Unsupported);
    QCOMPARE(r.error().node, node);
    QVERIFY2(r.error().message.find("node \"" + node + "\"") != std::string::npos, r.error().message.c_str());
    QVERIFY2(r.error().message.find(words) != std::string::npos, r.error().message.c_str());
}

}  // namespace

class TestTfliteExport : public QObject {
    Q_OBJECT

private slots:
    void flatbufferOfAnExample() {
        auto p = loadProject(std::string(KILN_SOURCE_DIR) + "/resources/examples/fashion_cnn.kiln");
        QVERIFY(p.ok());
        auto model = ops::analyzeModel(p->graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 5);
        auto bytes = exportTflite(*model, params, {"fashion_cnn", {}, "{}", "test"});
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        const auto* data = reinterpret_cast<const uint8_t*>(bytes->data());
        QVERIFY(flatbuffers::BufferHasIdentifier(data, "TFL3"));
        // The root Model table: version 3, one subgraph with tensors, inputs, outputs and
        // operators, and the buffers; every table and vector read lies inside the file.
        flatbuffers::Verifier verifier(data, bytes->size());
        const auto* root = flatbuffers::GetRoot<flatbuffers::Table>(data);
        QVERIFY(root->VerifyTableStart(verifier));
        QCOMPARE(root->GetField<uint32_t>(4, 0), uint32_t(3));
        using Tables = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
        const auto* subgraphs = root->GetPointer<const Tables*>(8);
        const auto* buffers = root->GetPointer<const Tables*>(12);
        const auto* codes = root->GetPointer<const Tables*>(6);
        QVERIFY(subgraphs && buffers && codes);
        QVERIFY(verifier.VerifyVector(subgraphs) && verifier.VerifyVector(buffers) && verifier.VerifyVector(codes));
        QCOMPARE(subgraphs->size(), flatbuffers::uoffset_t(1));
        const auto* graph = subgraphs->Get(0);
        QVERIFY(graph->VerifyTableStart(verifier));
        const auto* tensors = graph->GetPointer<const Tables*>(4);
        const auto* inputs = graph->GetPointer<const flatbuffers::Vector<int32_t>*>(6);
        const auto* outputs = graph->GetPointer<const flatbuffers::Vector<int32_t>*>(8);
        const auto* operators = graph->GetPointer<const Tables*>(10);
        QVERIFY(tensors && inputs && outputs && operators);
        QVERIFY(verifier.VerifyVector(tensors) && verifier.VerifyVector(operators));
        QCOMPARE(inputs->size(), flatbuffers::uoffset_t(1));
        QCOMPARE(outputs->size(), flatbuffers::uoffset_t(1));
        // The input tensor keeps the Input node's name, batch 1 stored and -1 in its signature.
        const auto* input = tensors->Get(static_cast<flatbuffers::uoffset_t>(inputs->Get(0)));
        QCOMPARE(input->GetPointer<const flatbuffers::String*>(10)->str(), std::string("image"));
        const auto* shape = input->GetPointer<const flatbuffers::Vector<int32_t>*>(4);
        const auto* signature = input->GetPointer<const flatbuffers::Vector<int32_t>*>(18);
        QCOMPARE(shape->size(), flatbuffers::uoffset_t(4));
        QCOMPARE(shape->Get(0), 1);
        QCOMPARE(signature->Get(0), -1);
        QCOMPARE(shape->Get(1), 28);
        // Two convolutions with their batch normalisations folded, two pools, a reshape, two
        // fully connected layers and the ReLUs: no MUL or ADD operator.
        for (flatbuffers::uoffset_t k = 0; k < codes->size(); ++k) {
            const int32_t code = codes->Get(k)->GetField<int32_t>(10, 0);
            QVERIFY2(code != 18 && code != 0, qPrintable(QString::number(code)));
        }
        // The weights are stored as float32: the file is at least as large as the parameters.
        int64_t values = 0;
        for (const auto& prm : params.params())
            if (!prm.name.ends_with("moving_mean") && !prm.name.ends_with("moving_variance") && !prm.name.ends_with("gamma") &&
                !prm.name.ends_with("beta"))
                values += prm.value.numel();
        QVERIFY(static_cast<int64_t>(bytes->size()) > values * 4);
        // The file names its model.
        QVERIFY(bytes->find("Kiln model fashion_cnn") != std::string::npos);
    }

    void repositoryWritesModelTflite() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto p = loadProject(std::string(KILN_SOURCE_DIR) + "/resources/examples/fashion_mlp.kiln");
        QVERIFY(p.ok());
        auto model = ops::analyzeModel(p->graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 5);
        auto formats = parseFormats("tflite,kiln");
        QVERIFY(formats.ok());
        QVERIFY(formats->tflite && formats->kiln && !formats->onnx && !formats->savedModel);
        auto bad = parseFormats("tflite,coreml");
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("(use onnx, savedmodel, kiln, tflite)") != std::string::npos);
        RepositoryExport req;
        req.base = dir.path().toStdString();
        req.name = "mlp";
        req.formats = *formats;
        req.projectText = serializeProject(*p);
        ThreadPool pool(1);
        auto res = exportToRepository(*model, params, req, pool);
        QVERIFY2(res.ok(), res.ok() ? "" : res.error().toString().c_str());
        QVERIFY(std::filesystem::file_size(res->versionDir + "/model.tflite") > 100000);
        std::ifstream in(res->versionDir + "/kiln-model.json");
        const auto j = nlohmann::json::parse(in);
        QCOMPARE(j["files"]["tflite"].get<std::string>(), std::string("model.tflite"));
        QVERIFY(!j["files"].contains("onnx"));
    }

    void int8TensorsAndScales() {
        // x[3] → Dense(4, relu) "h" → Dense(2) "y", with hand-made full-integer parameters.
        auto p = parseProject(R"({"format":"kiln-project","version":2,"name":"q","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[3]}},
          {"name":"h","op":"Dense","inputs":["x"],"attrs":{"units":4,"activation":"relu"}},
          {"name":"y","op":"Dense","inputs":["h"],"attrs":{"units":2}}],"outputs":["y"]}})",
                              "q.kiln");
        QVERIFY(p.ok());
        auto model = ops::analyzeModel(p->graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 5);
        Int8Quantization quant;
        quant.scheme = QuantScheme::FullInteger;
        quant.values = {{"x", {0.02f, -3}}, {"h", {0.05f, -128}}, {"y", {0.1f, 7}}};
        // QDQ parameters are not a TensorFlow Lite layout.
        Int8Quantization qdq = quant;
        qdq.scheme = QuantScheme::Qdq;
        QCOMPARE(exportTflite(*model, params, {}, &qdq).error().code, ErrorCode::Internal);
        auto bytes = exportTflite(*model, params, {}, &quant);
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        const auto* data = reinterpret_cast<const uint8_t*>(bytes->data());
        flatbuffers::Verifier verifier(data, bytes->size());
        const auto* root = flatbuffers::GetRoot<flatbuffers::Table>(data);
        QVERIFY(root->VerifyTableStart(verifier));
        using Tables = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
        const auto* graph = root->GetPointer<const Tables*>(8)->Get(0);
        const auto* tensors = graph->GetPointer<const Tables*>(4);
        const auto* buffers = root->GetPointer<const Tables*>(12);
        QVERIFY(verifier.VerifyVector(tensors) && verifier.VerifyVector(buffers));
        std::map<std::string, const flatbuffers::Table*> byName;
        for (const auto* t : *tensors) {
            QVERIFY(t->VerifyTableStart(verifier));
            byName[t->GetPointer<const flatbuffers::String*>(10)->str()] = t;
        }
        auto type = [&](const char* n) { return byName.at(n)->GetField<int8_t>(6, 0); };
        auto scales = [&](const char* n) {
            const auto* q = byName.at(n)->GetPointer<const flatbuffers::Table*>(12);
            const auto* v = q ? q->GetPointer<const flatbuffers::Vector<float>*>(8) : nullptr;
            return v ? std::vector<float>(v->begin(), v->end()) : std::vector<float>{};
        };
        auto zeroPoints = [&](const char* n) {
            const auto* v = byName.at(n)->GetPointer<const flatbuffers::Table*>(12)->GetPointer<const flatbuffers::Vector<int64_t>*>(10);
            return std::vector<int64_t>(v->begin(), v->end());
        };
        // Float I/O around int8 twins; activations int8 on the given grids.
        QCOMPARE(type("x"), int8_t(0));
        QCOMPARE(type("y"), int8_t(0));
        QVERIFY(scales("x").empty());
        QCOMPARE(type("x/int8"), int8_t(9));
        QCOMPARE(scales("x/int8"), std::vector<float>{0.02f});
        QCOMPARE(zeroPoints("x/int8"), std::vector<int64_t>{-3});
        QCOMPARE(type("h"), int8_t(9));
        QCOMPARE(zeroPoints("y/int8"), std::vector<int64_t>{7});
        // Kernels int8 per output channel (zero points 0); biases int32 on input × weight scale.
        const Tensor& w = params.params()[size_t(params.index(model->graph.find("h"), 0))].value;
        QCOMPARE(type("h/kernel"), int8_t(9));
        const auto ws = scales("h/kernel");
        QCOMPARE(ws.size(), size_t(4));
        QCOMPARE(zeroPoints("h/kernel"), std::vector<int64_t>(4, 0));
        for (int c = 0; c < 4; ++c) {
            float m = 0;
            for (int k = 0; k < 3; ++k) m = std::max(m, std::fabs(w.data<float>()[k * 4 + c]));
            QCOMPARE(ws[size_t(c)], m / 127.0f);
        }
        QCOMPARE(type("h/bias"), int8_t(2));
        const auto bs = scales("h/bias");
        for (int c = 0; c < 4; ++c) QVERIFY(std::fabs(bs[size_t(c)] - 0.02f * ws[size_t(c)]) <= 1e-6f * bs[size_t(c)]);
        QCOMPARE(scales("y/bias").size(), size_t(2));
        QCOMPARE(scales("y/bias")[0], float(double(0.05f) * double(scales("y/kernel")[0])));
        // The kernel's bytes: the largest weight of each channel at ±127.
        const auto* kernelBuffer = buffers->Get(byName.at("h/kernel")->GetField<uint32_t>(8, 0));
        const auto* kb = kernelBuffer->GetPointer<const flatbuffers::Vector<int8_t>*>(4);
        QCOMPARE(kb->size(), flatbuffers::uoffset_t(12));
        for (int c = 0; c < 4; ++c) {
            int biggest = 0;
            for (int k = 0; k < 3; ++k) biggest = std::max(biggest, std::abs(int(kb->Get(flatbuffers::uoffset_t(c * 3 + k)))));
            QCOMPARE(biggest, 127);
        }
        // A missing activation grid is an internal error naming the tensor, not a float operator.
        quant.values.erase("h");
        auto missing = exportTflite(*model, params, {}, &quant);
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().message.find("\"h\"") != std::string::npos, missing.error().message.c_str());
    }

private:
    // The subgraph's tensor names, input and output tensor names, and operator codes.
    struct Layout {
        std::vector<std::string> names, inputs, outputs;
        std::vector<int32_t> codes;
        std::map<std::string, std::pair<int8_t, std::vector<int64_t>>> typeAndZeroPoint;
    };
    static Layout layout(const std::string& bytes) {
        Layout l;
        const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
        flatbuffers::Verifier verifier(data, bytes.size());
        const auto* root = flatbuffers::GetRoot<flatbuffers::Table>(data);
        if (!root->VerifyTableStart(verifier)) return l;
        using Tables = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
        const auto* graph = root->GetPointer<const Tables*>(8)->Get(0);
        const auto* tensors = graph->GetPointer<const Tables*>(4);
        for (const auto* t : *tensors) {
            l.names.push_back(t->GetPointer<const flatbuffers::String*>(10)->str());
            std::vector<int64_t> zp;
            if (const auto* q = t->GetPointer<const flatbuffers::Table*>(12))
                if (const auto* v = q->GetPointer<const flatbuffers::Vector<int64_t>*>(10)) zp.assign(v->begin(), v->end());
            l.typeAndZeroPoint[l.names.back()] = {t->GetField<int8_t>(6, 0), zp};
        }
        for (int32_t i : *graph->GetPointer<const flatbuffers::Vector<int32_t>*>(6)) l.inputs.push_back(l.names[size_t(i)]);
        for (int32_t i : *graph->GetPointer<const flatbuffers::Vector<int32_t>*>(8)) l.outputs.push_back(l.names[size_t(i)]);
        const auto* codes = root->GetPointer<const Tables*>(6);
        for (const auto* op : *graph->GetPointer<const Tables*>(10))
            l.codes.push_back(codes->Get(op->GetField<uint32_t>(4, 0))->GetField<int32_t>(10, 0));
        return l;
    }

private slots:
    // Outputs that no operator computes: an Input that is an output is the input tensor itself (no
    // duplicate name, float or int8), a Dropout output is a copy under its own name; with int8
    // inputs and outputs the edges are the int8 tensors with their grids and no QUANTIZE (114) or
    // DEQUANTIZE (6) is left.
    void outputsThatAreInputsAndInt8Edges() {
        auto p = parseProject(R"({"format":"kiln-project","version":2,"name":"q","graph":{"nodes":[
          {"name":"x","op":"Input","attrs":{"shape":[3]}},
          {"name":"h","op":"Dense","inputs":["x"],"attrs":{"units":4,"activation":"relu"}},
          {"name":"dr","op":"Dropout","inputs":["h"]},
          {"name":"y","op":"Dense","inputs":["dr"],"attrs":{"units":2}}],"outputs":["y","x","dr"]}})",
                              "q.kiln");
        QVERIFY(p.ok());
        auto model = ops::analyzeModel(p->graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 5);
        Int8Quantization quant;
        quant.scheme = QuantScheme::FullInteger;
        quant.values = {{"x", {0.02f, -3}}, {"h", {0.05f, -128}}, {"dr", {0.05f, -128}}, {"y", {0.1f, 7}}};
        for (int mode = 0; mode < 3; ++mode) {  // float, int8 with float edges, int8 edges
            auto bytes = exportTflite(*model, params, {}, mode ? &quant : nullptr, mode == 2);
            QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
            const Layout l = layout(*bytes);
            QVERIFY(!l.names.empty());
            const std::set<std::string> unique(l.names.begin(), l.names.end());
            QCOMPARE(unique.size(), l.names.size());
            QCOMPARE(l.inputs, std::vector<std::string>{"x"});
            QCOMPARE(l.outputs, (std::vector<std::string>{"y", "x", "dr"}));
            const bool edgeOps = std::count(l.codes.begin(), l.codes.end(), 114) + std::count(l.codes.begin(), l.codes.end(), 6) > 0;
            QCOMPARE(edgeOps, mode == 1);
            for (const char* edge : {"x", "y", "dr"}) QCOMPARE(l.typeAndZeroPoint.at(edge).first, int8_t(mode == 2 ? 9 : 0));
            if (mode == 2) {
                QCOMPARE(l.typeAndZeroPoint.at("x").second, std::vector<int64_t>{-3});
                QCOMPARE(l.typeAndZeroPoint.at("y").second, std::vector<int64_t>{7});
                QCOMPARE(l.typeAndZeroPoint.at("dr").second, std::vector<int64_t>{-128});
            }
        }
    }

    void refusesWhatTfliteCannotExpress() {
        expectRefused(R"({"name":"x","op":"Input","attrs":{"shape":[6]}},
                         {"name":"norm","op":"LayerNormalization","inputs":["x"]},
                         {"name":"out","op":"Dense","inputs":["norm"],"attrs":{"units":2}})",
                      "norm", "(LayerNormalization) cannot be exported to TensorFlow Lite");
        expectRefused(R"({"name":"x","op":"Input","attrs":{"shape":[5,5,4]}},
                         {"name":"out","op":"Conv2D","inputs":["x"],"attrs":{"filters":4,"groups":2}})",
                      "out", "grouped convolutions (groups 2)");
        expectRefused(R"({"name":"x","op":"Input","attrs":{"shape":[4]}},
                         {"name":"out","op":"GELU","inputs":["x"],"attrs":{"approximate":true}})",
                      "out", "only the exact (erf) form");
        expectRefused(R"({"name":"x","op":"Input","attrs":{"shape":[4]}},
                         {"name":"out","op":"Dense","inputs":["x"],"attrs":{"units":3,"activation":"gelu"}},
                         {"name":"y","op":"GELU","inputs":["out"],"attrs":{"approximate":true}})",
                      "y", "only the exact (erf) form");
    }
};

QTEST_GUILESS_MAIN(TestTfliteExport)
#include "tst_tflite_export.moc"
