// SPDX-License-Identifier: Apache-2.0
// ONNX export and Kiln's ONNX reader: every bundled example and a set of op-coverage models go
// through export → read back → plan, and must give Kiln's outputs; a foreign channel-first net
// is checked against a direct computation; malformed files give errors.
#include <QtTest>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/core/rng.h"
#include "engine/exec/plan.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::io;

namespace {

struct Loaded {
    ops::ModelInfo model;
    exec::ParamStore params;
};

Loaded load(const Graph& g, uint64_t seed) {
    auto m = ops::analyzeModel(g);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    Loaded l{std::move(m.value()), {}};
    l.params = exec::ParamStore::create(l.model, seed);
    // Non-trivial batch-norm statistics, so that the exported inference form is really exercised.
    for (auto& p : l.params.params()) {
        bool var = p.name.ends_with("moving_variance");
        if (!var && !p.name.ends_with("moving_mean") && !p.name.ends_with("gamma") && !p.name.ends_with("beta")) continue;
        float* d = p.value.data<float>();
        for (int64_t e = 0; e < p.value.numel(); ++e) {
            float u = rng::uniform(seed + 99, std::hash<std::string>{}(p.name), static_cast<uint64_t>(e));
            d[e] = var ? 0.5f + u : (p.name.ends_with("gamma") ? 0.5f + u : u - 0.5f);
        }
    }
    return l;
}

Graph exampleGraph(const QString& name) {
    auto p = loadProject((std::string(KILN_SOURCE_DIR) + "/resources/examples/" + name.toStdString() + ".kiln"));
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return p->graph;
}

Graph graphFromJson(const std::string& nodesJson, const std::string& outputs) {
    std::string text = R"({"format":"kiln-project","version":2,"name":"t","graph":{"nodes":)" + nodesJson +
                       R"(,"outputs":)" + outputs + "}}";
    auto p = parseProject(text, "inline.kiln");
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return p->graph;
}

ParityReport parity(Loaded& l, const std::string& bytes, int64_t batch = 4) {
    ThreadPool pool(2);
    auto inputs = syntheticInputs(l.model, batch, 3);
    auto r = checkOnnxParity(l.model, l.params, bytes, inputs, pool);
    if (!r.ok()) qFatal("parity: %s", r.error().toString().c_str());
    return r.value();
}

onnx::ModelProto parse(const std::string& bytes) {
    onnx::ModelProto m;
    if (!m.ParseFromString(bytes)) qFatal("exported bytes do not parse");
    return m;
}

}  // namespace

class TestOnnxExport : public QObject {
    Q_OBJECT

private slots:
    void examples_data() {
        QTest::addColumn<QString>("name");
        for (const char* n : {"fashion_mlp", "fashion_cnn", "residual", "two_tower"}) QTest::newRow(n) << QString(n);
    }
    void examples() {
        QFETCH(QString, name);
        Loaded l = load(exampleGraph(name), 11);
        ModelMetadata meta{name.toStdString(), {"a", "b"}, R"({"scale":0.00392156862745098})", "0.1.0"};
        auto bytes = exportOnnx(l.model, l.params, meta);
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());

        onnx::ModelProto m = parse(*bytes);
        QCOMPARE(m.ir_version(), kOnnxIrVersion);
        QCOMPARE(m.opset_import(0).version(), kOnnxOpset);
        QCOMPARE(m.graph().input_size(), static_cast<int>(l.model.inputs.size()));
        for (const auto& in : m.graph().input()) QCOMPARE(in.type().tensor_type().shape().dim(0).dim_param(), std::string("N"));
        std::map<std::string, std::string> props;
        for (const auto& p : m.metadata_props()) props[p.key()] = p.value();
        QCOMPARE(props["kiln.class_names"], std::string(R"(["a","b"])"));
        QCOMPARE(props["kiln.version"], std::string("0.1.0"));
        QVERIFY(props.count("kiln.preprocessing"));
        for (const auto& n : m.graph().node()) QVERIFY2(n.op_type() != "Dropout", "dropout must be exported as identity");

        ParityReport r = parity(l, *bytes, 5);
        QVERIFY2(r.passed, std::to_string(r.maxAbsDiff).c_str());
        QVERIFY(r.maxAbsDiff < 1e-4);
        QCOMPARE(r.batch, int64_t(5));

        // The reader gives back Kiln's structure: same parameter names and shapes.
        auto back = importOnnx(*bytes);
        QVERIFY(back.ok());
        for (const auto& p : l.params.params()) {
            bool found = false;
            for (const auto& w : back->weights)
                if (w.name == p.name) found = w.tensor.shape() == p.value.shape();
            QVERIFY2(found, p.name.c_str());
        }
        QCOMPARE(back->outputs.size(), l.model.outputs.size());
    }

    // Weights that differ from the exported ones must fail the check (the check can fail).
    void parityDetectsDifferences() {
        Loaded a = load(exampleGraph("fashion_mlp"), 1);
        Loaded b = load(exampleGraph("fashion_mlp"), 2);
        auto bytes = exportOnnx(b.model, b.params, {});
        QVERIFY(bytes.ok());
        ParityReport r = parity(a, *bytes);
        QVERIFY(!r.passed);
        QVERIFY(r.maxAbsDiff > 1e-3);
        QCOMPARE(r.worstOutput, std::string("logits"));
    }

    void opCoverage_data() {
        QTest::addColumn<QString>("nodes");
        QTest::addColumn<QString>("outputs");
        QTest::newRow("conv variants") << R"([
          {"name":"x","op":"Input","attrs":{"shape":[9,11,4]}},
          {"name":"dw","op":"Conv2D","inputs":["x"],"attrs":{"filters":8,"kernel_size":[3,3],"groups":4,"padding":"same","activation":"relu6"}},
          {"name":"dil","op":"Conv2D","inputs":["dw"],"attrs":{"filters":6,"kernel_size":[3,2],"dilation_rate":[2,2],"padding":"same","activation":"gelu"}},
          {"name":"st","op":"Conv2D","inputs":["dil"],"attrs":{"filters":5,"kernel_size":[3,3],"strides":[2,2],"padding":"same","activation":"tanh"}},
          {"name":"avg","op":"AveragePooling2D","inputs":["st"],"attrs":{"pool_size":[2,2],"padding":"same"}},
          {"name":"mx","op":"MaxPooling2D","inputs":["st"],"attrs":{"pool_size":[3,3],"strides":[1,1],"padding":"same"}},
          {"name":"cat","op":"Concatenate","inputs":["avg","avg"]},
          {"name":"bn","op":"BatchNormalization","inputs":["mx"]},
          {"name":"mul","op":"Multiply","inputs":["bn","mx"]},
          {"name":"sum","op":"Add","inputs":["mul","bn","mx"]},
          {"name":"gap","op":"GlobalAveragePooling2D","inputs":["sum"]},
          {"name":"gap2","op":"GlobalAveragePooling2D","inputs":["cat"]},
          {"name":"flat","op":"Flatten","inputs":["sum"]},
          {"name":"head","op":"Dense","inputs":["flat"],"attrs":{"units":7,"activation":"softmax"}},
          {"name":"j","op":"Concatenate","inputs":["gap","gap2"]},
          {"name":"sm","op":"Dense","inputs":["j"],"attrs":{"units":3,"activation":"sigmoid"}}
        ])" << R"(["head","sm"])";
        QTest::newRow("sequence ops") << R"([
          {"name":"ids","op":"Input","attrs":{"shape":[6]}},
          {"name":"emb","op":"Embedding","inputs":["ids"],"attrs":{"input_dim":20,"output_dim":8}},
          {"name":"ln","op":"LayerNormalization","inputs":["emb"]},
          {"name":"g","op":"GELU","inputs":["ln"]},
          {"name":"ga","op":"GELU","inputs":["ln"],"attrs":{"approximate":true}},
          {"name":"lr","op":"LeakyReLU","inputs":["g"],"attrs":{"negative_slope":0.2}},
          {"name":"r6","op":"ReLU6","inputs":["ga"]},
          {"name":"m","op":"Multiply","inputs":["lr","r6"]},
          {"name":"bn","op":"BatchNormalization","inputs":["m"]},
          {"name":"rs","op":"Reshape","inputs":["bn"],"attrs":{"target_shape":[12,4]}},
          {"name":"sg","op":"Sigmoid","inputs":["rs"]},
          {"name":"th","op":"Tanh","inputs":["sg"]},
          {"name":"sm","op":"Softmax","inputs":["th"]},
          {"name":"f","op":"Flatten","inputs":["sm"]},
          {"name":"d","op":"Dropout","inputs":["f"]},
          {"name":"bn2","op":"BatchNormalization","inputs":["d"]},
          {"name":"out","op":"Dense","inputs":["bn2"],"attrs":{"units":2,"use_bias":false}}
        ])" << R"(["out","d"])";
        QTest::newRow("gather by constant indices") << R"([
          {"name":"x","op":"Input","attrs":{"shape":[5,4]}},
          {"name":"g","op":"Gather","inputs":["x"],"attrs":{"axis":1,"indices":[3,0,-1,3]}},
          {"name":"g2","op":"Gather","inputs":["x"],"attrs":{"axis":-1,"indices":[1],"indices_shape":[]}},
          {"name":"d","op":"Dense","inputs":["g2"],"attrs":{"units":3}},
          {"name":"im","op":"Input","attrs":{"shape":[6,6,4]}},
          {"name":"c","op":"Conv2D","inputs":["im"],"attrs":{"filters":5,"padding":"same"}},
          {"name":"ch","op":"Gather","inputs":["c"],"attrs":{"axis":3,"indices":[4,1,1]}},
          {"name":"gap","op":"GlobalAveragePooling2D","inputs":["ch"]},
          {"name":"out","op":"Dense","inputs":["gap"],"attrs":{"units":2}}
        ])"
                                                    << R"(["g","d","out"])";
        // Per-sample indices: Kiln's domain function (GatherND inside), read back as the same Gather.
        QTest::newRow("gather per sample") << R"([
          {"name":"seq","op":"Input","attrs":{"shape":[6,4]}},
          {"name":"ids","op":"Input","attrs":{"shape":[3],"dtype":"int32"}},
          {"name":"pick","op":"Gather","inputs":["seq","ids"]},
          {"name":"cols","op":"Input","attrs":{"shape":[2,2]}},
          {"name":"col","op":"Gather","inputs":["seq","cols"],"attrs":{"axis":2}},
          {"name":"f","op":"Flatten","inputs":["col"]},
          {"name":"out","op":"Dense","inputs":["f"],"attrs":{"units":2}}
        ])"
                                           << R"(["pick","out"])";
        QTest::newRow("mobile activations") << R"([
          {"name":"x","op":"Input","attrs":{"shape":[8,8,3]}},
          {"name":"c","op":"Conv2D","inputs":["x"],"attrs":{"filters":6,"padding":"same"}},
          {"name":"s","op":"SiLU","inputs":["c"]},
          {"name":"hs","op":"HardSwish","inputs":["s"]},
          {"name":"hsg","op":"HardSigmoid","inputs":["c"]},
          {"name":"cl","op":"Clip","inputs":["hsg"],"attrs":{"min":0.2,"max":0.7}},
          {"name":"m","op":"Multiply","inputs":["hs","cl"]},
          {"name":"gap","op":"GlobalAveragePooling2D","inputs":["m"]},
          {"name":"d","op":"Dense","inputs":["gap"],"attrs":{"units":5}},
          {"name":"s2","op":"SiLU","inputs":["d"]},
          {"name":"c2","op":"Clip","inputs":["s2"],"attrs":{"min":-0.1,"max":0.3}},
          {"name":"out","op":"Dense","inputs":["c2"],"attrs":{"units":3}}
        ])" << R"(["out","hs"])";
        QTest::newRow("squeeze and excitation") << R"([
          {"name":"x","op":"Input","attrs":{"shape":[6,6,4]}},
          {"name":"c","op":"Conv2D","inputs":["x"],"attrs":{"filters":8,"padding":"same","activation":"relu"}},
          {"name":"g","op":"GlobalAveragePooling2D","inputs":["c"]},
          {"name":"sq","op":"Dense","inputs":["g"],"attrs":{"units":2,"activation":"relu"}},
          {"name":"ex","op":"Dense","inputs":["sq"],"attrs":{"units":8,"activation":"sigmoid"}},
          {"name":"se","op":"Multiply","inputs":["c","ex"]},
          {"name":"r","op":"Reshape","inputs":["ex"],"attrs":{"target_shape":[1,1,8]}},
          {"name":"se2","op":"Multiply","inputs":["r","se"]},
          {"name":"sub","op":"Subtract","inputs":["se2","c"]},
          {"name":"ex4","op":"Dense","inputs":["g"],"attrs":{"units":4,"activation":"sigmoid"}},
          {"name":"m3","op":"Multiply","inputs":["x","ex4"]},
          {"name":"f","op":"Flatten","inputs":["sub"]},
          {"name":"out","op":"Dense","inputs":["f"],"attrs":{"units":3}}
        ])" << R"(["out","m3","se"])";
        QTest::newRow("image ops") << R"([
          {"name":"x","op":"Input","attrs":{"shape":[5,6,3]}},
          {"name":"r","op":"Rescaling","inputs":["x"],"attrs":{"scale":0.5,"offset":-0.25}},
          {"name":"zp","op":"ZeroPadding2D","inputs":["r"],"attrs":{"padding":[1,0,2,1]}},
          {"name":"c","op":"Conv2D","inputs":["zp"],"attrs":{"filters":4,"padding":"same"}},
          {"name":"dw","op":"DepthwiseConv2D","inputs":["c"],"attrs":{"depth_multiplier":2,"strides":2,"padding":"same","activation":"relu6"}},
          {"name":"dw2","op":"DepthwiseConv2D","inputs":["x"],"attrs":{"kernel_size":[3,2],"dilation_rate":[2,1],"use_bias":false}},
          {"name":"gdw","op":"GlobalAveragePooling2D","inputs":["dw"]},
          {"name":"gdw2","op":"GlobalAveragePooling2D","inputs":["dw2"]},
          {"name":"zp2","op":"ZeroPadding2D","inputs":["c"]},
          {"name":"up","op":"UpSampling2D","inputs":["zp2"],"attrs":{"interpolation":"bilinear"}},
          {"name":"up2","op":"UpSampling2D","inputs":["c"],"attrs":{"size":[2,3]}},
          {"name":"gmp","op":"GlobalMaxPooling2D","inputs":["up"]},
          {"name":"gmp2","op":"GlobalMaxPooling2D","inputs":["x"]},
          {"name":"r2","op":"Rescaling","inputs":["gmp"],"attrs":{"scale":2.0,"offset":1.0}},
          {"name":"cat","op":"Concatenate","inputs":["r2","gmp2","gdw","gdw2"]},
          {"name":"out","op":"Dense","inputs":["cat"],"attrs":{"units":3}}
        ])" << R"(["out","up2"])";
    }
    void opCoverage() {
        QFETCH(QString, nodes);
        QFETCH(QString, outputs);
        Loaded l = load(graphFromJson(nodes.toStdString(), outputs.toStdString()), 5);
        auto bytes = exportOnnx(l.model, l.params, {"cov", {}, "{}", "test"});
        QVERIFY2(bytes.ok(), bytes.ok() ? "" : bytes.error().toString().c_str());
        ParityReport r = parity(l, *bytes, 3);
        QVERIFY2(r.passed, (std::to_string(r.maxAbsDiff) + " at " + r.worstOutput).c_str());
    }

    // A channel-first net as other tools write it: NCHW input, padded Conv, MaxPool, Flatten of
    // a 2x2 map, Gemm with transB. Checked against a direct computation.
    void foreignChannelFirstNet() {
        const int C = 2, H = 4, W = 4, M = 3, O = 5;
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        auto* g = m.mutable_graph();
        g->set_name("nchw");
        auto* in = g->add_input();
        in->set_name("x");
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        tt->mutable_shape()->add_dim()->set_dim_param("batch");
        for (int d : {C, H, W}) tt->mutable_shape()->add_dim()->set_dim_value(d);
        std::vector<float> w(M * C * 9), b(M), fc(O * M * 4), fb(O);
        for (size_t k = 0; k < w.size(); ++k) w[k] = std::sin(0.7f * k);
        for (size_t k = 0; k < b.size(); ++k) b[k] = 0.1f * k;
        for (size_t k = 0; k < fc.size(); ++k) fc[k] = std::cos(0.3f * k);
        for (size_t k = 0; k < fb.size(); ++k) fb[k] = -0.05f * k;
        auto init = [&](const char* name, std::vector<int64_t> dims, const std::vector<float>& v) {
            auto* t = g->add_initializer();
            t->set_name(name);
            t->set_data_type(onnx::TensorProto::FLOAT);
            for (auto d : dims) t->add_dims(d);
            for (float f : v) t->add_float_data(f);
        };
        init("W", {M, C, 3, 3}, w);
        init("B", {M}, b);
        init("FC", {O, M * 4}, fc);
        init("FB", {O}, fb);
        auto node = [&](const char* op, std::vector<std::string> ins, const char* out) {
            auto* n = g->add_node();
            n->set_op_type(op);
            for (auto& s : ins) n->add_input(s);
            n->add_output(out);
            return n;
        };
        auto ints = [](onnx::NodeProto* n, const char* name, std::vector<int64_t> v) {
            auto* a = n->add_attribute();
            a->set_name(name);
            a->set_type(onnx::AttributeProto::INTS);
            for (auto x : v) a->add_ints(x);
        };
        auto* conv = node("Conv", {"x", "W", "B"}, "c");
        ints(conv, "pads", {1, 1, 1, 1});
        node("Relu", {"c"}, "r");
        auto* mp = node("MaxPool", {"r"}, "p");
        ints(mp, "kernel_shape", {2, 2});
        ints(mp, "strides", {2, 2});
        node("Flatten", {"p"}, "f");
        auto* gemm = node("Gemm", {"f", "FC", "FB"}, "y");
        auto* tb = gemm->add_attribute();
        tb->set_name("transB");
        tb->set_type(onnx::AttributeProto::INT);
        tb->set_i(1);
        auto* out = g->add_output();
        out->set_name("y");
        out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("batch");
        out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(O);

        auto imported = importOnnx(m.SerializeAsString());
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
        QCOMPARE(imported->inputChannelFirst, std::vector<bool>{true});
        auto info = ops::analyzeModel(imported->graph);
        QVERIFY(info.ok());
        auto params = exec::ParamStore::create(*info, 0);
        QVERIFY(applyWeights(*imported, params).ok());
        ThreadPool pool(1);
        exec::CompileOptions opts;
        opts.batch = 2;
        opts.training = false;
        auto plan = exec::Plan::compile(*info, params, opts, pool);
        QVERIFY(plan.ok());

        const int N = 2;
        std::vector<float> x(N * C * H * W);  // NCHW
        for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(1.3f * k + 0.2f);
        float* kin = (*plan)->input(size_t{0});  // NHWC
        for (int n = 0; n < N; ++n)
            for (int c = 0; c < C; ++c)
                for (int yy = 0; yy < H; ++yy)
                    for (int xx = 0; xx < W; ++xx) kin[((n * H + yy) * W + xx) * C + c] = x[((n * C + c) * H + yy) * W + xx];
        QVERIFY((*plan)->forward().ok());

        for (int n = 0; n < N; ++n) {
            std::vector<float> conv(M * H * W), pooled(M * 4);
            for (int o = 0; o < M; ++o)
                for (int yy = 0; yy < H; ++yy)
                    for (int xx = 0; xx < W; ++xx) {
                        float s = b[o];
                        for (int c = 0; c < C; ++c)
                            for (int ky = 0; ky < 3; ++ky)
                                for (int kx = 0; kx < 3; ++kx) {
                                    int iy = yy + ky - 1, ix = xx + kx - 1;
                                    if (iy < 0 || ix < 0 || iy >= H || ix >= W) continue;
                                    s += w[((o * C + c) * 3 + ky) * 3 + kx] * x[((n * C + c) * H + iy) * W + ix];
                                }
                        conv[(o * H + yy) * W + xx] = std::max(s, 0.f);
                    }
            for (int o = 0; o < M; ++o)
                for (int py = 0; py < 2; ++py)
                    for (int px = 0; px < 2; ++px) {
                        float v = -INFINITY;
                        for (int dy = 0; dy < 2; ++dy)
                            for (int dx = 0; dx < 2; ++dx) v = std::max(v, conv[(o * H + py * 2 + dy) * W + px * 2 + dx]);
                        pooled[(o * 2 + py) * 2 + px] = v;  // channel-first flatten order
                    }
            for (int j = 0; j < O; ++j) {
                float s = fb[j];
                for (int k = 0; k < M * 4; ++k) s += fc[j * M * 4 + k] * pooled[k];
                QVERIFY2(std::fabs((*plan)->output(0)[n * O + j] - s) < 1e-4, std::to_string(j).c_str());
            }
        }
    }

    void malformed_data() {
        QTest::addColumn<int>("kind");
        for (int k = 0; k < 12; ++k) QTest::newRow(std::to_string(k).c_str()) << k;
    }
    void malformed() {
        QFETCH(int, kind);
        Loaded l = load(exampleGraph("fashion_cnn"), 3);
        auto good = exportOnnx(l.model, l.params, {});
        QVERIFY(good.ok());
        std::string bytes = *good;
        onnx::ModelProto m = parse(bytes);
        auto* g = m.mutable_graph();
        switch (kind) {
        case 0: bytes.clear(); break;
        case 1: bytes = std::string("\xff\xff\xff\xff garbage", 13); break;
        case 2: bytes.resize(bytes.size() / 2); break;
        case 3: g->mutable_node(3)->set_input(0, "nowhere"); bytes = m.SerializeAsString(); break;
        case 4: g->mutable_initializer(0)->mutable_raw_data()->resize(3); bytes = m.SerializeAsString(); break;
        case 5: g->mutable_node(2)->set_op_type("FancyOp"); bytes = m.SerializeAsString(); break;
        case 6: g->clear_output(); bytes = m.SerializeAsString(); break;
        case 7: g->mutable_initializer(0)->set_dims(0, -5); bytes = m.SerializeAsString(); break;
        case 8: g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(0);
                bytes = m.SerializeAsString(); break;
        case 9:
            for (auto& n : *g->mutable_node())
                if (n.op_type() == "Transpose") { n.mutable_attribute(0)->set_ints(1, 2); break; }
            bytes = m.SerializeAsString();
            break;
        case 10:
            for (auto& n : *g->mutable_node())
                if (n.op_type() == "Conv") { n.mutable_attribute()->Clear(); auto* a = n.add_attribute(); a->set_name("group"); a->set_type(onnx::AttributeProto::INT); a->set_i(0); }
            bytes = m.SerializeAsString();
            break;
        case 11: m.clear_graph(); bytes = m.SerializeAsString(); break;
        }
        auto r = importOnnx(bytes, "bad.onnx");
        QVERIFY(!r.ok());
        QVERIFY(!r.error().message.empty());
        QCOMPARE(r.error().file, std::string("bad.onnx"));
    }

    void missingFile() {
        auto r = loadOnnx("/nonexistent/model.onnx");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::FileNotFound);
    }
};

QTEST_GUILESS_MAIN(TestOnnxExport)
#include "tst_onnx_export.moc"
