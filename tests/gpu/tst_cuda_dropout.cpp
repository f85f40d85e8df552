// SPDX-License-Identifier: Apache-2.0
// Dropout on the GPU keeps exactly the elements the CPU keeps for the same seed and step (the
// counter-based Philox stream), for lengths that are and are not multiples of four.
#include <QtTest>

#include <QVector>

#include <vector>

#include "engine/ops/kernels/dropout.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/device_context.h"
#include "engine/backends/cuda/kernels.h"
#endif

using namespace kiln::engine;

class TestCudaDropout : public QObject {
    Q_OBJECT

private slots:
    void masksMatchCpu_data() {
        QTest::addColumn<qint64>("n");
        QTest::addColumn<float>("rate");
        QTest::addColumn<quint64>("seed");
        QTest::addColumn<quint64>("step");
        QTest::newRow("small-odd") << qint64(7) << 0.5f << quint64(1) << quint64(0);
        QTest::newRow("million") << qint64(1 << 20) << 0.3f << quint64(42) << quint64(17);
        QTest::newRow("ragged") << qint64(1000003) << 0.9f << quint64(0xdeadbeefcafeull)
                                << quint64(1ull << 33);
    }
    void masksMatchCpu() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        QFETCH(qint64, n);
        QFETCH(float, rate);
        QFETCH(quint64, seed);
        QFETCH(quint64, step);
        std::vector<float> x(static_cast<size_t>(n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i % 13);
        std::vector<float> yCpu(x.size());
        std::vector<uint8_t> mCpu(x.size());
        ThreadPool pool(2);
        kernels::dropoutForward(x.data(), yCpu.data(), mCpu.data(), n, rate, seed, step, true, pool);

        auto ctx = cuda::DeviceContext::create(0);
        QVERIFY(ctx.ok());
        auto dx = (*ctx)->alloc(x.size() * 4);
        auto dy = (*ctx)->alloc(x.size() * 4);
        auto dm = (*ctx)->alloc(x.size());
        QVERIFY(dx.ok() && dy.ok() && dm.ok());
        QVERIFY((*ctx)->upload(dx->get(), x.data(), x.size() * 4).ok());
        cuda::k::dropoutForward(dx->as<float>(), dy->as<float>(), dm->as<uint8_t>(), n, rate, seed, step,
                                (*ctx)->stream());
        std::vector<float> yGpu(x.size());
        std::vector<uint8_t> mGpu(x.size());
        QVERIFY((*ctx)->download(yGpu.data(), dy->get(), x.size() * 4).ok());
        QVERIFY((*ctx)->download(mGpu.data(), dm->get(), x.size()).ok());
        QCOMPARE(mGpu, mCpu);
        QCOMPARE(yGpu, yCpu);
        size_t kept = 0;
        for (uint8_t k : mCpu) kept += k;
        if (n > 1000) QVERIFY(std::abs(double(kept) / double(n) - (1.0 - rate)) < 0.01);
#else
        QSKIP("built without CUDA");
#endif
    }

    // A noise shape (whole samples, whole channels) keeps on the GPU what the CPU keeps.
    void noiseShapeMatchesCpu_data() {
        QTest::addColumn<QVector<qint64>>("dims");
        QTest::addColumn<QVector<qint64>>("noiseShape");
        QTest::newRow("samples") << QVector<qint64>{64, 7, 7, 24} << QVector<qint64>{-1, 1, 1, 1};
        QTest::newRow("channels") << QVector<qint64>{5, 9, 9, 33} << QVector<qint64>{-1, 1, 1, 33};
        QTest::newRow("batch shared") << QVector<qint64>{6, 1001} << QVector<qint64>{1, -1};
    }
    void noiseShapeMatchesCpu() {
#ifdef KILN_HAVE_CUDA
        if (cuda::deviceCount() == 0) QSKIP("no CUDA device");
        QFETCH(QVector<qint64>, dims);
        QFETCH(QVector<qint64>, noiseShape);
        const std::vector<int64_t> d(dims.begin(), dims.end()), ns(noiseShape.begin(), noiseShape.end());
        const std::vector<int64_t> noise = kernels::dropoutNoiseDims(ns, d);
        QVERIFY(!noise.empty());
        int64_t n = 1, m = 1;
        for (size_t k = 0; k < d.size(); ++k) {
            n *= d[k];
            m *= noise[k];
        }
        const float rate = 0.4f;
        const uint64_t seed = 99, step = 5;
        std::vector<float> x(static_cast<size_t>(n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i % 17);
        std::vector<float> yCpu(x.size());
        std::vector<uint8_t> mCpu(x.size()), keep(static_cast<size_t>(m));
        ThreadPool pool(2);
        kernels::dropoutBroadcastForward(x.data(), yCpu.data(), mCpu.data(), keep.data(), d, noise, rate, seed, step,
                                         true, pool);
        cuda::k::DropoutNoise g;
        g.rank = static_cast<int>(d.size());
        for (int64_t k = g.rank - 1, s = 1; k >= 0; --k) {
            g.dims[k] = d[size_t(k)];
            g.stride[k] = noise[size_t(k)] == 1 ? 0 : s;
            s *= noise[size_t(k)];
        }
        auto ctx = cuda::DeviceContext::create(0);
        QVERIFY(ctx.ok());
        auto dx = (*ctx)->alloc(x.size() * 4);
        auto dy = (*ctx)->alloc(x.size() * 4);
        auto dm = (*ctx)->alloc(x.size());
        QVERIFY(dx.ok() && dy.ok() && dm.ok());
        QVERIFY((*ctx)->upload(dx->get(), x.data(), x.size() * 4).ok());
        cuda::k::dropoutBroadcastForward(dx->as<float>(), dy->as<float>(), dm->as<uint8_t>(), n, g, rate, seed, step,
                                         (*ctx)->stream());
        std::vector<float> yGpu(x.size());
        std::vector<uint8_t> mGpu(x.size());
        QVERIFY((*ctx)->download(yGpu.data(), dy->get(), x.size() * 4).ok());
        QVERIFY((*ctx)->download(mGpu.data(), dm->get(), x.size()).ok());
        QCOMPARE(mGpu, mCpu);
        QCOMPARE(yGpu, yCpu);
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaDropout)
#include "tst_cuda_dropout.moc"
