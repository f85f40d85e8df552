// SPDX-License-Identifier: Apache-2.0
// The doctor report: findings for a healthy GPU machine, an old driver, an old GPU, a busy GPU,
// a cuDNN of another major version, no driver, a build without CUDA; and the live report never fails.
// kiln-test-libs: kiln_app_common
#include <QtTest>

#include "app/common/doctor.h"
#include "engine/core/cpu_isa.h"

using kiln::app::Doctor;
using kiln::app::DoctorFacts;

namespace {
DoctorFacts healthy() {
    DoctorFacts f;
    f.cudaBuilt = true;
    f.driverVersion = 13000;
    f.runtimeVersion = 13000;
    f.cudnnVersion = 91900;
    f.cudnnBuiltWith = QStringLiteral("9.19.0");
    f.ncclVersion = 22809;
    f.gpus.push_back({0, QStringLiteral("NVIDIA H200"), 9, 0, 141ull << 30, 140ull << 30});
    return f;
}
}  // namespace

class TestDoctor : public QObject {
    Q_OBJECT

private slots:
    void healthyMachine() {
        const QString r = Doctor::report(healthy());
        QVERIFY(r.contains(QStringLiteral("NVIDIA driver: supports CUDA 13.0")));
        QVERIFY(r.contains(QStringLiteral("cuDNN: 9.19.0 (built with 9.19.0)")));
        QVERIFY(r.contains(QStringLiteral("NCCL: 2.28.9")));
        QVERIFY(r.contains(
            QStringLiteral("GPU 0: NVIDIA H200, compute capability 9.0, 140.0 GiB free of 141.0 GiB")));
        QVERIFY(r.contains(QStringLiteral("can train on the GPU")));
        QVERIFY(Doctor::gpuReady(healthy()));
    }
    void oldDriver() {
        auto f = healthy();
        f.driverVersion = 12020;
        const QString r = Doctor::report(f);
        QVERIFY(r.contains(QStringLiteral("supports CUDA 12.2, older than the CUDA 13.0 runtime")));
        QVERIFY(r.contains(QStringLiteral("Kiln trains on the CPU.")));
        QVERIFY(!Doctor::gpuReady(f));
    }
    void oldGpuAndBusyGpu() {
        auto f = healthy();
        f.gpus[0].major = 8;
        f.gpus[0].minor = 6;
        f.gpus[0].freeMemory = 1ull << 30;
        const QString r = Doctor::report(f);
        QVERIFY(r.contains(QStringLiteral("compute capability 8.6; Kiln's GPU kernels need 9.0")));
        QVERIFY(r.contains(QStringLiteral("only 1.0 GiB free")));
        QVERIFY(!Doctor::gpuReady(f));
    }
    void cudnnMajorMismatch() {
        auto f = healthy();
        f.cudnnVersion = 81000;
        QVERIFY(Doctor::report(f).contains(QStringLiteral("another major version")));
    }
    void noDriver() {
        auto f = healthy();
        f.driverVersion = 0;
        f.gpus.clear();
        f.unavailableReason = QStringLiteral("CUDA driver version is insufficient for CUDA runtime version");
        const QString r = Doctor::report(f);
        QVERIFY(r.contains(QStringLiteral("NVIDIA driver: not found")));
        QVERIFY(r.contains(QStringLiteral("install the driver")));
        QVERIFY(r.trimmed().endsWith(QStringLiteral("Kiln trains on the CPU.")));
    }
    void builtWithoutCuda() {
        const QString r = Doctor::report(DoctorFacts{});
        QVERIFY(r.contains(QStringLiteral("without the CUDA backend")));
        QVERIFY(r.contains(QStringLiteral("Kiln trains on the CPU.")));
    }
    void liveReport() {
        const auto f = Doctor::gather();
        const QString r = Doctor::report(f);
        QVERIFY(!r.isEmpty());
        QCOMPARE(r.contains(QStringLiteral("can train on the GPU")), Doctor::gpuReady(f));
        // The CPU kernel variant this process runs is named first.
        const bool avx512 = kiln::engine::cpuIsa() == kiln::engine::CpuIsa::Avx512;
        QVERIFY(r.startsWith(avx512 ? QStringLiteral("CPU kernels: AVX-512\n") : QStringLiteral("CPU kernels: AVX2\n")));
    }
};

QTEST_APPLESS_MAIN(TestDoctor)
#include "tst_doctor.moc"
