// SPDX-License-Identifier: Apache-2.0
// Dropout on the GPU keeps exactly the elements the CPU keeps for the same seed and step (the
// counter-based Philox stream), for lengths that are and are not multiples of four.
#include <QtTest>

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
};

QTEST_APPLESS_MAIN(TestCudaDropout)
#include "tst_cuda_dropout.moc"
