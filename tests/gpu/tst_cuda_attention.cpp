// SPDX-License-Identifier: Apache-2.0
// MultiHeadAttention on CUDA against the CPU kernel: one training step of small models around the
// op (self- and cross-attention, causal mask, attention dropout, no biases, value_dim and
// output_dim, head widths that leave a head's columns unaligned, widths the 16-bit products take)
// on both devices from the same weights and data; outputs, losses and every parameter gradient
// must agree, in fp32 to fp32 rounding and in fp16/bf16 within their precision. The placement
// keeps every node on the GPU. Without a GPU those rows are skipped, visibly; every row's model
// still trains a step on the CPU.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <string>

#include "cuda_test_models.h"
#include "engine/core/precision.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/cuda_plan.h"
#include "engine/backends/cuda/op_table_cuda.h"
#endif

using namespace kiln::engine;
using namespace kiln::test;

namespace {

// A sequence model: x [t, 6] -> Dense (d units, on every position) -> the attention (and, for
// cross-attention, a value of tv positions made from x by Flatten, Dense and Reshape) -> Flatten
// (or GlobalAveragePooling1D with `pool`) -> Dense(3). `mha` is the attention node's attribute object.
std::string model(int t, int d, const std::string& mha, int tv = 0, bool pool = false) {
    std::string nodes = R"([{"name": "x", "op": "Input", "attrs": {"shape": [)" + std::to_string(t) + R"(, 6]}},
      {"name": "pre", "op": "Dense", "inputs": ["x"], "attrs": {"units": )" +
                        std::to_string(d) + "}},";
    std::string value = "pre";
    if (tv > 0) {
        nodes += R"({"name": "xf", "op": "Flatten", "inputs": ["x"]},
          {"name": "vd", "op": "Dense", "inputs": ["xf"], "attrs": {"units": )" +
                 std::to_string(tv * d) + R"(}},
          {"name": "v", "op": "Reshape", "inputs": ["vd"], "attrs": {"target_shape": [)" +
                 std::to_string(tv) + ", " + std::to_string(d) + "]}},";
        value = "v";
    }
    nodes += R"({"name": "att", "op": "MultiHeadAttention", "inputs": ["pre", ")" + value + R"("], "attrs": )" + mha +
             R"(},
      {"name": "flat", "op": ")" +
             std::string(pool ? "GlobalAveragePooling1D" : "Flatten") + R"(", "inputs": ["att"]},
      {"name": "out", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}])";
    return nodes;
}

}  // namespace

class TestCudaAttention : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // Plain fp32 on tensor-core GPUs, so CUDA and CPU agree to fp32 rounding.
        qputenv("NVIDIA_TF32_OVERRIDE", "0");
    }

    void matchesCpu_data() {
        QTest::addColumn<QString>("nodes");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("precision");  // Precision
        QTest::addColumn<double>("tolerance");
        const int fp32 = static_cast<int>(Precision::Fp32);
        QTest::newRow("self") << QString::fromStdString(model(5, 8, R"({"num_heads": 2, "key_dim": 4})")) << 6
                              << fp32 << 2e-4;
        QTest::newRow("self-causal") << QString::fromStdString(
                                            model(6, 8, R"({"num_heads": 2, "key_dim": 4, "use_causal_mask": true})"))
                                     << 5 << fp32 << 2e-4;
        QTest::newRow("self-dropout")
            << QString::fromStdString(model(7, 8, R"({"num_heads": 2, "key_dim": 4, "dropout": 0.3})")) << 6 << fp32
            << 2e-4;
        QTest::newRow("causal-dropout") << QString::fromStdString(model(
                                               6, 8, R"({"num_heads": 3, "key_dim": 2, "dropout": 0.25, "use_causal_mask": true})"))
                                        << 4 << fp32 << 2e-4;
        // Heads 3 wide: each head's columns start 12 bytes after the previous head's.
        QTest::newRow("odd-widths") << QString::fromStdString(model(
                                           5, 7, R"({"num_heads": 3, "key_dim": 3, "value_dim": 5, "output_dim": 9})"))
                                    << 3 << fp32 << 2e-4;
        QTest::newRow("cross-no-bias") << QString::fromStdString(model(
                                              5, 8, R"({"num_heads": 2, "key_dim": 4, "use_bias": false})", 3))
                                       << 4 << fp32 << 2e-4;
        QTest::newRow("self-causal-pooled")
            << QString::fromStdString(model(6, 8, R"({"num_heads": 2, "key_dim": 4, "use_causal_mask": true})", 0, true))
            << 5 << fp32 << 2e-4;
        QTest::newRow("cross-longer-value")
            << QString::fromStdString(model(3, 8, R"({"num_heads": 1, "key_dim": 8, "value_dim": 2})", 11)) << 2
            << fp32 << 2e-4;
        const std::string wide = model(16, 32, R"({"num_heads": 4, "key_dim": 8, "dropout": 0.1})");
        QTest::newRow("wide-fp32") << QString::fromStdString(wide) << 8 << fp32 << 2e-4;
        // 16-bit inputs of the forward products (projections and, with widths of multiples of 8,
        // the attention products); the CPU reference is fp32.
        QTest::newRow("wide-fp16") << QString::fromStdString(wide) << 8 << static_cast<int>(Precision::Fp16) << 2e-2;
        QTest::newRow("wide-bf16") << QString::fromStdString(wide) << 8 << static_cast<int>(Precision::Bf16) << 6e-2;
        QTest::newRow("odd-widths-bf16") << QString::fromStdString(model(
                                                5, 7, R"({"num_heads": 3, "key_dim": 3, "use_causal_mask": true})"))
                                         << 3 << static_cast<int>(Precision::Bf16) << 6e-2;
    }
    // Every row's model analyses and trains a step on the CPU, and the CUDA placement keeps all of it
    // on the GPU: a broken row shows without a GPU.
    void modelsTrainOnCpu_data() { matchesCpu_data(); }
    void modelsTrainOnCpu() {
        QFETCH(QString, nodes);
        QFETCH(int, batch);
        auto m = buildModel(nodes.toStdString());
        ThreadPool pool(2);
        auto store = exec::ParamStore::create(m, 5);
        exec::CompileOptions co;
        co.batch = batch;
        co.losses = {lossSpec("MeanSquaredError", "out", Shape({3}))};
        co.seed = 3;
        auto cpu = exec::Plan::compile(m, store, co, pool);
        QVERIFY2(cpu.ok(), cpu.ok() ? "" : cpu.error().toString().c_str());
        const size_t inFloats = static_cast<size_t>(m.nodes[static_cast<size_t>(m.inputs[0])].output.numelFrom(1) * batch);
        const auto x = makeData(inFloats, 1);
        const auto t = makeData(static_cast<size_t>(3 * batch), 2);
        std::memcpy((*cpu)->input(0), x.data(), x.size() * 4);
        std::memcpy((*cpu)->target(0), t.data(), t.size() * 4);
        QVERIFY((*cpu)->trainStep(9).ok());
        QVERIFY(std::isfinite((*cpu)->loss(0)) && (*cpu)->loss(0) > 0.0f);
#ifdef KILN_HAVE_CUDA
        // The placement (pure, no GPU needed) puts every node of it on the GPU.
        const cuda::Placement place = cuda::placeModel(m);
        QVERIFY2(place.cpuNodes.empty(), place.report().c_str());
#endif
    }

    void matchesCpu() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        QFETCH(QString, nodes);
        QFETCH(int, batch);
        QFETCH(int, precision);
        QFETCH(double, tolerance);
        auto m = buildModel(nodes.toStdString());
        std::vector<exec::LossSpec> losses{lossSpec("MeanSquaredError", "out", Shape({3}))};
        ThreadPool pool(2);
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
        go.precision = static_cast<Precision>(precision);
        auto gpu = cuda::CudaPlan::compile(m, gpuStore, go, **ctx, pool);
        QVERIFY2(gpu.ok(), gpu.ok() ? "" : gpu.error().toString().c_str());
        QVERIFY2((*gpu)->placement().cpuNodes.empty(), (*gpu)->placement().report().c_str());

        const size_t inFloats = static_cast<size_t>(m.nodes[static_cast<size_t>(m.inputs[0])].output.numelFrom(1) * batch);
        const auto x = makeData(inFloats, 1);
        const auto t = makeData(static_cast<size_t>(3 * batch), 2);
        std::memcpy((*cpu)->input(0), x.data(), x.size() * 4);
        std::memcpy((*cpu)->target(0), t.data(), t.size() * 4);
        QVERIFY((*gpu)->setInput(0, x.data()).ok());
        QVERIFY((*gpu)->setTarget(0, t.data()).ok());
        QVERIFY((*cpu)->trainStep(9).ok());
        auto st = (*gpu)->trainStep(9);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());
        auto gl = (*gpu)->losses();
        QVERIFY2(gl.ok(), gl.ok() ? "" : gl.error().toString().c_str());
        const float cl = (*cpu)->loss(0);
        QVERIFY2(std::abs((*gl)[0] - cl) <= tolerance * std::max(1.0f, std::abs(cl)),
                 qPrintable(QStringLiteral("loss %1 vs %2").arg((*gl)[0]).arg(cl)));
        const size_t outFloats = static_cast<size_t>((*cpu)->outputShape(0).numel());
        std::vector<float> gout(outFloats);
        QVERIFY((*gpu)->downloadOutput(0, gout.data()).ok());
        const double od = relDiff((*cpu)->output(0), gout.data(), outFloats);
        QVERIFY2(od < tolerance, qPrintable(QStringLiteral("outputs differ by %1").arg(od)));
        auto& dps = (*gpu)->deviceParams();
        for (size_t i = 0; i < cpuStore.params().size(); ++i) {
            const auto& p = cpuStore.params()[i];
            std::vector<float> g(static_cast<size_t>(p.grad.numel()));
            QVERIFY((*ctx)->download(g.data(), dps[i].grad, g.size() * 4).ok());
            // key/bias has an exactly zero gradient on both devices.
            const double d = relDiff(p.grad.data<float>(), g.data(), g.size());
            QVERIFY2(d < tolerance,
                     qPrintable(QStringLiteral("%1: gradient differs by %2").arg(QString::fromStdString(p.name)).arg(d)));
        }
        // Inference (no dropout) agrees too.
        exec::CompileOptions ci = co;
        ci.training = false;
        ci.losses = {};
        auto cpuInf = exec::Plan::compile(m, cpuStore, ci, pool);
        QVERIFY2(cpuInf.ok(), cpuInf.ok() ? "" : cpuInf.error().toString().c_str());
        cuda::CudaPlanOptions gi = go;
        gi.training = false;
        gi.losses = {};
        auto gpuInf = cuda::CudaPlan::compile(m, gpuStore, gi, **ctx, pool);
        QVERIFY2(gpuInf.ok(), gpuInf.ok() ? "" : gpuInf.error().toString().c_str());
        std::memcpy((*cpuInf)->input(0), x.data(), x.size() * 4);
        QVERIFY((*gpuInf)->setInput(0, x.data()).ok());
        QVERIFY((*cpuInf)->forward().ok());
        QVERIFY((*gpuInf)->forward().ok());
        QVERIFY((*gpuInf)->downloadOutput(0, gout.data()).ok());
        const double id = relDiff((*cpuInf)->output(0), gout.data(), outFloats);
        QVERIFY2(id < tolerance, qPrintable(QStringLiteral("inference outputs differ by %1").arg(id)));
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaAttention)
#include "tst_cuda_attention.moc"
