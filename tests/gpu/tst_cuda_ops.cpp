// SPDX-License-Identifier: Apache-2.0
// CUDA against CPU for every op with a CUDA row: one training step of a small model around the op
// on both devices from the same weights and data; outputs, losses and every parameter gradient
// must agree. Also the op table's shape (runs without a GPU) and the placement report.
#include <QtTest>

#include <cstdlib>
#include <deque>
#include <set>

#include "cuda_test_models.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/cuda_plan.h"
#include "engine/backends/cuda/op_table_cuda.h"
#endif

using namespace kiln::engine;
using namespace kiln::test;

namespace {

struct Case {
    const char* name;
    const char* nodes;  // ends in a node "out"
    const char* loss;
    std::vector<int64_t> target;  // per sample
    int classes = 0;
    ops::OpKind covers;
};

// Every case starts with a trainable layer so gradients flow through the op under test.
std::vector<Case> cases() {
    using K = ops::OpKind;
    const char* img = R"({"name": "x", "op": "Input", "attrs": {"shape": [7, 7, 3]}},
      {"name": "pre", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 4, "kernel_size": 1}})";
    const char* vec = R"({"name": "x", "op": "Input", "attrs": {"shape": [10]}},
      {"name": "pre", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8}})";
    auto imgCase = [&](const char* name, std::string body, K k) {
        static std::deque<std::string> keep;  // stable addresses for the c_str() kept in Case
        keep.push_back(std::string("[") + img + "," + body + R"(,
          {"name": "flat", "op": "Flatten", "inputs": ["op"]},
          {"name": "out", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}])");
        return Case{name, keep.back().c_str(), "MeanSquaredError", {3}, 0, k};
    };
    auto vecCase = [&](const char* name, std::string body, K k) {
        static std::deque<std::string> keep;  // stable addresses for the c_str() kept in Case
        keep.push_back(std::string("[") + vec + "," + body + R"(,
          {"name": "out", "op": "Dense", "inputs": ["op"], "attrs": {"units": 3}}])");
        return Case{name, keep.back().c_str(), "MeanSquaredError", {3}, 0, k};
    };
    std::vector<Case> c;
    c.push_back(vecCase(
        "dense-relu",
        R"({"name": "op", "op": "Dense", "inputs": ["pre"], "attrs": {"units": 6, "activation": "relu"}})",
        K::Dense));
    c.push_back(vecCase(
        "dense-gelu",
        R"({"name": "op", "op": "Dense", "inputs": ["pre"], "attrs": {"units": 6, "activation": "gelu"}})",
        K::Dense));
    c.push_back(vecCase(
        "dense-softmax",
        R"({"name": "op", "op": "Dense", "inputs": ["pre"], "attrs": {"units": 6, "activation": "softmax"}})",
        K::Dense));
    c.push_back(vecCase(
        "dense-tanh-nobias",
        R"({"name": "op", "op": "Dense", "inputs": ["pre"], "attrs": {"units": 6, "activation": "tanh", "use_bias": false}})",
        K::Dense));
    c.push_back(imgCase(
        "conv-same",
        R"({"name": "op", "op": "Conv2D", "inputs": ["pre"], "attrs": {"filters": 5, "kernel_size": 3, "padding": "same", "activation": "relu"}})",
        K::Conv2D));
    c.push_back(imgCase(
        "conv-same-stride2",
        R"({"name": "op", "op": "Conv2D", "inputs": ["pre"], "attrs": {"filters": 5, "kernel_size": 3, "strides": 2, "padding": "same"}})",
        K::Conv2D));
    c.push_back(imgCase(
        "conv-7x7-stride2",
        R"({"name": "op", "op": "Conv2D", "inputs": ["pre"], "attrs": {"filters": 3, "kernel_size": 4, "strides": 2, "padding": "same", "activation": "sigmoid"}})",
        K::Conv2D));
    c.push_back(imgCase(
        "conv-valid-dilated",
        R"({"name": "op", "op": "Conv2D", "inputs": ["pre"], "attrs": {"filters": 2, "kernel_size": 2, "dilation_rate": 2}})",
        K::Conv2D));
    c.push_back(imgCase(
        "conv-groups",
        R"({"name": "op", "op": "Conv2D", "inputs": ["pre"], "attrs": {"filters": 6, "kernel_size": 3, "groups": 2, "padding": "same", "activation": "gelu"}})",
        K::Conv2D));
    c.push_back(imgCase(
        "depthwise-same-stride2",
        R"({"name": "op", "op": "DepthwiseConv2D", "inputs": ["pre"], "attrs": {"strides": 2, "padding": "same", "depth_multiplier": 2, "activation": "relu6"}})",
        K::DepthwiseConv2D));
    c.push_back(imgCase(
        "maxpool-same",
        R"({"name": "op", "op": "MaxPooling2D", "inputs": ["pre"], "attrs": {"pool_size": 3, "strides": 2, "padding": "same"}})",
        K::MaxPooling2D));
    c.push_back(imgCase("maxpool-valid", R"({"name": "op", "op": "MaxPooling2D", "inputs": ["pre"]})",
                        K::MaxPooling2D));
    c.push_back(imgCase(
        "avgpool-same",
        R"({"name": "op", "op": "AveragePooling2D", "inputs": ["pre"], "attrs": {"padding": "same"}})",
        K::AveragePooling2D));
    c.push_back(imgCase("global-maxpool", R"({"name": "g", "op": "GlobalMaxPooling2D", "inputs": ["pre"]},
      {"name": "op", "op": "Dense", "inputs": ["g"], "attrs": {"units": 4}})",
                        K::GlobalMaxPooling2D));
    c.push_back(imgCase(
        "zero-padding",
        R"({"name": "op", "op": "ZeroPadding2D", "inputs": ["pre"], "attrs": {"padding": [1, 2, 0, 3]}})",
        K::ZeroPadding2D));
    c.push_back(imgCase("upsampling-nearest",
                        R"({"name": "op", "op": "UpSampling2D", "inputs": ["pre"], "attrs": {"size": [2, 3]}})",
                        K::UpSampling2D));
    c.push_back(imgCase(
        "upsampling-bilinear",
        R"({"name": "op", "op": "UpSampling2D", "inputs": ["pre"], "attrs": {"interpolation": "bilinear"}})",
        K::UpSampling2D));
    c.push_back(imgCase(
        "rescaling",
        R"({"name": "op", "op": "Rescaling", "inputs": ["pre"], "attrs": {"scale": 0.5, "offset": -0.25}})",
        K::Rescaling));
    c.push_back(imgCase("batchnorm", R"({"name": "op", "op": "BatchNormalization", "inputs": ["pre"]})",
                        K::BatchNormalization));
    c.push_back(imgCase("layernorm", R"({"name": "op", "op": "LayerNormalization", "inputs": ["pre"]})",
                        K::LayerNormalization));
    c.push_back(imgCase("normalization", R"({"name": "op", "op": "Normalization", "inputs": ["pre"]})",
                        K::Normalization));
    c.push_back(imgCase("dropout",
                        R"({"name": "op", "op": "Dropout", "inputs": ["pre"], "attrs": {"rate": 0.3}})",
                        K::Dropout));
    c.push_back(imgCase(
        "dropout-per-sample",
        R"({"name": "op", "op": "Dropout", "inputs": ["pre"], "attrs": {"rate": 0.3, "noise_shape": [-1, 1, 1, 1]}})",
        K::Dropout));
    c.push_back(
        imgCase("reshape",
                R"({"name": "op", "op": "Reshape", "inputs": ["pre"], "attrs": {"target_shape": [49, 4]}})",
                K::Reshape));
    c.push_back(imgCase("relu", R"({"name": "op", "op": "ReLU", "inputs": ["pre"]})", K::ReLU));
    c.push_back(imgCase(
        "leaky", R"({"name": "op", "op": "LeakyReLU", "inputs": ["pre"], "attrs": {"negative_slope": 0.2}})",
        K::LeakyReLU));
    c.push_back(imgCase("relu6", R"({"name": "op", "op": "ReLU6", "inputs": ["pre"]})", K::ReLU6));
    c.push_back(imgCase("gelu-exact", R"({"name": "op", "op": "GELU", "inputs": ["pre"]})", K::GELU));
    c.push_back(imgCase("gelu-tanh",
                        R"({"name": "op", "op": "GELU", "inputs": ["pre"], "attrs": {"approximate": true}})",
                        K::GELU));
    c.push_back(imgCase("sigmoid", R"({"name": "op", "op": "Sigmoid", "inputs": ["pre"]})", K::Sigmoid));
    c.push_back(imgCase("tanh", R"({"name": "op", "op": "Tanh", "inputs": ["pre"]})", K::Tanh));
    c.push_back(imgCase("softmax", R"({"name": "op", "op": "Softmax", "inputs": ["pre"]})", K::Softmax));
    c.push_back(imgCase("silu", R"({"name": "op", "op": "SiLU", "inputs": ["pre"]})", K::SiLU));
    c.push_back(imgCase("hard-sigmoid", R"({"name": "op", "op": "HardSigmoid", "inputs": ["pre"]})", K::HardSigmoid));
    c.push_back(imgCase("hard-swish", R"({"name": "op", "op": "HardSwish", "inputs": ["pre"]})", K::HardSwish));
    c.push_back(imgCase("clip",
                        R"({"name": "op", "op": "Clip", "inputs": ["pre"], "attrs": {"min": -0.25, "max": 0.5}})",
                        K::Clip));
    c.push_back(imgCase(
        "add3", R"({"name": "b", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 4, "kernel_size": 1}},
      {"name": "op", "op": "Add", "inputs": ["pre", "b", "pre"]})",
        K::Add));
    c.push_back(
        imgCase("multiply",
                R"({"name": "b", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 4, "kernel_size": 1}},
      {"name": "op", "op": "Multiply", "inputs": ["pre", "b"]})",
                K::Multiply));
    c.push_back(
        imgCase("multiply-channel-scale",
                R"({"name": "g", "op": "GlobalAveragePooling2D", "inputs": ["pre"]},
      {"name": "sc", "op": "Dense", "inputs": ["g"], "attrs": {"units": 4, "activation": "sigmoid"}},
      {"name": "op", "op": "Multiply", "inputs": ["pre", "sc"]})",
                K::Multiply));
    c.push_back(
        imgCase("subtract",
                R"({"name": "b", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 4, "kernel_size": 1}},
      {"name": "op", "op": "Subtract", "inputs": ["pre", "b"]})",
                K::Subtract));
    c.push_back(
        imgCase("concat-channels",
                R"({"name": "b", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 2, "kernel_size": 1}},
      {"name": "op", "op": "Concatenate", "inputs": ["pre", "b"]})",
                K::Concatenate));
    c.push_back(
        imgCase("concat-rows",
                R"({"name": "b", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 4, "kernel_size": 1}},
      {"name": "op", "op": "Concatenate", "inputs": ["pre", "b"], "attrs": {"axis": 1}})",
                K::Concatenate));
    {
        static std::string gap = std::string("[") + img + R"(,
          {"name": "op", "op": "GlobalAveragePooling2D", "inputs": ["pre"]},
          {"name": "out", "op": "Dense", "inputs": ["op"], "attrs": {"units": 3}}])";
        c.push_back({"global-avg-pool", gap.c_str(), "MeanSquaredError", {3}, 0, K::GlobalAveragePooling2D});
    }
    {
        static std::string emb = R"([{"name": "x", "op": "Input", "attrs": {"shape": [5]}},
          {"name": "op", "op": "Embedding", "inputs": ["x"], "attrs": {"input_dim": 9, "output_dim": 4}},
          {"name": "flat", "op": "Flatten", "inputs": ["op"]},
          {"name": "out", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}])";
        c.push_back({"embedding", emb.c_str(), "MeanSquaredError", {3}, -9, K::Embedding});
    }
    {
        static std::string seq = R"([{"name": "x", "op": "Input", "attrs": {"shape": [5, 6]}},
          {"name": "pre", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
          {"name": "op", "op": "GlobalAveragePooling1D", "inputs": ["pre"]},
          {"name": "keep", "op": "GlobalAveragePooling1D", "inputs": ["pre"], "attrs": {"keepdims": true}},
          {"name": "flat", "op": "Flatten", "inputs": ["keep"]},
          {"name": "cat", "op": "Concatenate", "inputs": ["op", "flat"]},
          {"name": "out", "op": "Dense", "inputs": ["cat"], "attrs": {"units": 3}}])";
        c.push_back({"global-avg-pool-1d", seq.c_str(), "MeanSquaredError", {3}, 0, K::GlobalAveragePooling1D});
    }
    {  // more configurations in tst_cuda_attention
        static std::string att = R"([{"name": "x", "op": "Input", "attrs": {"shape": [5, 6]}},
          {"name": "pre", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8}},
          {"name": "op", "op": "MultiHeadAttention", "inputs": ["pre", "pre"], "attrs": {"num_heads": 2, "key_dim": 3, "use_causal_mask": true, "dropout": 0.2}},
          {"name": "flat", "op": "Flatten", "inputs": ["op"]},
          {"name": "out", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}])";
        c.push_back({"multi-head-attention", att.c_str(), "MeanSquaredError", {3}, 0, K::MultiHeadAttention});
    }
    // Repeated and negative constant indices: the backward adds several rows into one.
    c.push_back(vecCase("gather", R"({"name": "op", "op": "Gather", "inputs": ["pre"], "attrs": {"indices": [7, 0, -1, 3, 3]}})",
                        K::Gather));
    auto lossCase = [&](const char* name, const char* loss, std::vector<int64_t> target, int classes, K k) {
        static std::string body = std::string("[") + vec + R"(,
          {"name": "out", "op": "Dense", "inputs": ["pre"], "attrs": {"units": 4}}])";
        return Case{name, body.c_str(), loss, std::move(target), classes, k};
    };
    c.push_back(
        lossCase("sparse-ce", "SparseCategoricalCrossentropy", {}, 4, K::SparseCategoricalCrossentropy));
    c.push_back(lossCase("categorical-ce", "CategoricalCrossentropy", {4}, 0, K::CategoricalCrossentropy));
    c.push_back(lossCase("binary-ce", "BinaryCrossentropy", {4}, 0, K::BinaryCrossentropy));
    c.push_back(lossCase("mse", "MeanSquaredError", {4}, 0, K::MeanSquaredError));
    c.push_back(lossCase("mae", "MeanAbsoluteError", {4}, 0, K::MeanAbsoluteError));
    c.push_back(lossCase("binary-focal", "BinaryFocalCrossentropy", {4}, 0, K::BinaryFocalCrossentropy));
    c.push_back(
        lossCase("categorical-focal", "CategoricalFocalCrossentropy", {4}, 0, K::CategoricalFocalCrossentropy));
    c.push_back(lossCase("sparse-focal", "SparseCategoricalFocalCrossentropy", {}, 4,
                         K::SparseCategoricalFocalCrossentropy));
    return c;
}

}  // namespace

class TestCudaOps : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // Plain fp32 on tensor-core GPUs, so CUDA and CPU agree to fp32 rounding.
        qputenv("NVIDIA_TF32_OVERRIDE", "0");
    }

    void tableRowsInOrderAndCovered() {
#ifdef KILN_HAVE_CUDA
        const auto& t = cuda::cudaOpTable();
        std::set<ops::OpKind> covered;
        for (const auto& c : cases()) covered.insert(c.covers);
        for (size_t i = 0; i < t.size(); ++i) {
            if (!t[i]) continue;
            QCOMPARE(static_cast<size_t>(t[i]->kind), i);
            if (t[i]->kind == ops::OpKind::Flatten) continue;  // used by most cases
            // The Plugin row runs a plugin's own CUDA kernels; the example plugin has none.
            if (t[i]->kind == ops::OpKind::Plugin) continue;
            QVERIFY2(covered.count(t[i]->kind), ops::opDef(t[i]->kind).name.data());
        }
        QVERIFY(!t[static_cast<size_t>(ops::OpKind::Input)]);
#else
        QSKIP("built without CUDA");
#endif
    }

    void placementListsCpuNodesAndCopies() {
#ifdef KILN_HAVE_CUDA
        auto m = buildModel(R"([{"name": "x", "op": "Input", "attrs": {"shape": [6]}},
          {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
          {"name": "b", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
          {"name": "c", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
          {"name": "m", "op": "Multiply", "inputs": ["a", "b", "c"]},
          {"name": "out", "op": "Dense", "inputs": ["m"], "attrs": {"units": 2}}])");
        auto p = cuda::placeModel(m);
        QCOMPARE(p.cpuNodes.size(), size_t{1});
        QCOMPARE(QString::fromStdString(p.cpuNodes[0]), QStringLiteral("m (Multiply)"));
        QCOMPARE(p.copies.size(), size_t{4});  // three inputs to the host, the product back
        const std::string r = p.report();
        QVERIFY(r.find("5 of 6 nodes on the GPU") != std::string::npos);
        QVERIFY(r.find("a -> host for m") != std::string::npos);
        QVERIFY(r.find("m -> device from out") != std::string::npos);
        auto all = cuda::placeModel(buildModel(cases()[0].nodes));
        QVERIFY(all.cpuNodes.empty());
        QVERIFY(all.report().find("no copies") != std::string::npos);
#else
        QSKIP("built without CUDA");
#endif
    }

    void matchesCpu_data() {
        QTest::addColumn<int>("index");
        const auto c = cases();
        for (size_t i = 0; i < c.size(); ++i) QTest::newRow(c[i].name) << static_cast<int>(i);
        QTest::newRow("cpu-fallback") << -1;
    }
    void matchesCpu() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        QFETCH(int, index);
        Case c;
        if (index >= 0) {
            c = cases()[static_cast<size_t>(index)];
        } else {  // a CPU-placed node inside a GPU model: copies both ways
            c = Case{"cpu-fallback",
                     R"([{"name": "x", "op": "Input", "attrs": {"shape": [6]}},
              {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
              {"name": "b", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
              {"name": "m", "op": "Multiply", "inputs": ["a", "b", "a"]},
              {"name": "out", "op": "Dense", "inputs": ["m"], "attrs": {"units": 3}}])",
                     "MeanSquaredError",
                     {3},
                     0,
                     ops::OpKind::Multiply};
        }
        auto m = buildModel(c.nodes);
        const int64_t batch = 6;
        std::vector<exec::LossSpec> losses{lossSpec(c.loss, "out", Shape(c.target))};
        ThreadPool pool(1);
        auto cpuStore = exec::ParamStore::create(m, 5);
        auto gpuStore = exec::ParamStore::create(m, 5);
        exec::CompileOptions co;
        co.batch = batch;
        co.losses = losses;
        co.seed = 3;
        auto cpu = exec::Plan::compile(m, cpuStore, co, pool);
        QVERIFY2(cpu.ok(), cpu.ok() ? "" : cpu.error().toString().c_str());
        auto ctx = cuda::DeviceContext::create(0);
        QVERIFY2(ctx.ok(), ctx.ok() ? "" : ctx.error().toString().c_str());
        cuda::CudaPlanOptions go;
        go.batch = batch;
        go.losses = losses;
        go.seed = 3;
        go.tf32 = false;
        auto gpu = cuda::CudaPlan::compile(m, gpuStore, go, **ctx, pool);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.error().toString().c_str());

        const size_t inFloats =
            static_cast<size_t>(m.nodes[static_cast<size_t>(m.inputs[0])].output.numelFrom(1) * batch);
        const auto x = makeData(inFloats, 1, c.classes < 0 ? -c.classes : 0);
        size_t tFloats = static_cast<size_t>(batch);
        for (int64_t d : c.target) tFloats *= static_cast<size_t>(d);
        auto t = makeData(tFloats, 2, c.classes > 0 ? c.classes : 0);
        if (const std::string l = c.loss; l == "BinaryCrossentropy" || l == "CategoricalCrossentropy" ||
                                          l == "BinaryFocalCrossentropy" || l == "CategoricalFocalCrossentropy")
            for (float& v : t) v = v * 0.5f + 0.5f;  // probabilities
        std::memcpy((*cpu)->input(0), x.data(), x.size() * 4);
        std::memcpy((*cpu)->target(0), t.data(), t.size() * 4);
        QVERIFY((*gpu)->setInput(0, x.data()).ok());
        QVERIFY((*gpu)->setTarget(0, t.data()).ok());
        QVERIFY((*cpu)->trainStep(9).ok());
        auto st = (*gpu)->trainStep(9);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());
        auto gl = (*gpu)->losses();
        QVERIFY2(gl.ok(), gl.ok() ? "" : gl.error().toString().c_str());
        QVERIFY2(std::abs((*gl)[0] - (*cpu)->loss(0)) <= 1e-4 * std::max(1.0f, std::abs((*cpu)->loss(0))),
                 qPrintable(QStringLiteral("loss %1 vs %2").arg((*gl)[0]).arg((*cpu)->loss(0))));
        const size_t outFloats = static_cast<size_t>((*cpu)->outputShape(0).numel());
        std::vector<float> gout(outFloats);
        QVERIFY((*gpu)->downloadOutput(0, gout.data()).ok());
        QVERIFY2(relDiff((*cpu)->output(0), gout.data(), outFloats) < 1e-4, "outputs differ");
        auto& dps = (*gpu)->deviceParams();
        for (size_t i = 0; i < cpuStore.params().size(); ++i) {
            const auto& p = cpuStore.params()[i];
            std::vector<float> g(static_cast<size_t>(p.grad.numel()));
            QVERIFY((*ctx)->download(g.data(), dps[i].grad, g.size() * 4).ok());
            const double d = relDiff(p.grad.data<float>(), g.data(), g.size());
            QVERIFY2(
                d < 2e-4,
                qPrintable(
                    QStringLiteral("%1: gradient differs by %2").arg(QString::fromStdString(p.name)).arg(d)));
        }
        // Moving statistics (BatchNorm) follow the same rule on both.
        QVERIFY((*gpu)->downloadParams().ok());
        for (size_t i = 0; i < cpuStore.params().size(); ++i) {
            const auto& a = cpuStore.params()[i];
            const auto& b = gpuStore.params()[i];
            QVERIFY2(relDiff(a.value.data<float>(), b.value.data<float>(), size_t(a.value.numel())) < 1e-5,
                     a.name.c_str());
        }
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaOps)
#include "tst_cuda_ops.moc"
