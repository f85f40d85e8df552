// SPDX-License-Identifier: Apache-2.0
// CUDA backend smoke test (label gpu): device discovery, and the counter-based RNG giving the
// same numbers on the GPU as on the CPU. Skips cleanly where no device (or no CUDA build) exists.
#include <QtTest>

#include <vector>

#include "engine/core/rng.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_device.h"
#endif

class TestCudaDevice : public QObject {
    Q_OBJECT

private slots:
    void discoveryNeverFails() {
#ifdef KILN_HAVE_CUDA
        int n = kiln::engine::cuda::deviceCount();
        QVERIFY(n >= 0);
        auto devices = kiln::engine::cuda::listDevices();
        QVERIFY(devices.ok());
        QCOMPARE(static_cast<int>(devices->size()), n);
        if (n == 0) {
            QVERIFY(!kiln::engine::cuda::unavailableReason().empty());
            QSKIP(qPrintable(QStringLiteral("no CUDA device: %1")
                                 .arg(QString::fromStdString(kiln::engine::cuda::unavailableReason()))));
        }
        for (const auto& d : *devices) {
            QVERIFY(!d.name.empty());
            QVERIFY(d.totalMemory > 0);
            QVERIFY(d.major >= 7);
        }
#else
        QSKIP("built without CUDA");
#endif
    }

    void rngMatchesCpu() {
#ifdef KILN_HAVE_CUDA
        if (kiln::engine::cuda::deviceCount() == 0) QSKIP("no CUDA device");
        const int64_t n = 1 << 20;
        std::vector<float> gpu(static_cast<size_t>(n));
        auto st = kiln::engine::cuda::uniformOnDevice(0, 1234, 7, gpu.data(), n);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
        for (int64_t i = 0; i < n; ++i)
            QCOMPARE(gpu[static_cast<size_t>(i)], kiln::engine::rng::uniform(1234, 7, static_cast<uint64_t>(i)));
#else
        QSKIP("built without CUDA");
#endif
    }

    void missingDeviceIsAnError() {
#ifdef KILN_HAVE_CUDA
        float x = 0;
        auto st = kiln::engine::cuda::uniformOnDevice(kiln::engine::cuda::deviceCount() + 3, 1, 1, &x, 1);
        QVERIFY(!st.ok());
        QCOMPARE(st.error().code, kiln::engine::ErrorCode::DeviceUnavailable);
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaDevice)
#include "tst_cuda_device.moc"
