// SPDX-License-Identifier: Apache-2.0
// The doctor report: facts from the CUDA backend (through engine/api/devices.h), findings and
// advice through tr().
#include "app/common/doctor.h"

#include "engine/api/devices.h"
#include "engine/core/cpu_isa.h"

namespace kiln::app {
namespace {

// Kiln's GPU kernels are compiled for this compute capability (machine code and PTX).
constexpr int kBuiltMajor = 9;

QString cudaVersion(int v) {
    return QStringLiteral("%1.%2").arg(v / 1000).arg((v % 1000) / 10);
}
QString libVersion(int v, int majorDiv, int minorDiv) {
    return QStringLiteral("%1.%2.%3").arg(v / majorDiv).arg((v % majorDiv) / minorDiv).arg(v % minorDiv);
}
QString gib(quint64 b) {
    return QString::number(double(b) / double(1ull << 30), 'f', 1);
}

}  // namespace

DoctorFacts Doctor::gather() {
    DoctorFacts f;
    f.cpuKernels = QString::fromLatin1(engine::cpuIsaName(engine::cpuIsa()).data());
    f.cudaBuilt = engine::api::cudaBuilt();
    const auto s = engine::api::gpuSystemInfo();
    f.driverVersion = s.driverVersion;
    f.runtimeVersion = s.runtimeVersion;
    f.cudnnVersion = s.cudnnVersion;
    f.cudnnBuiltWith = QString::fromStdString(s.cudnnBuiltWith);
    f.ncclVersion = s.ncclVersion;
    f.unavailableReason = QString::fromStdString(s.unavailableReason);
    for (const auto& g : s.gpus)
        f.gpus.push_back(
            {g.index, QString::fromStdString(g.name), g.major, g.minor, g.totalMemory, g.freeMemory});
    return f;
}

bool Doctor::gpuReady(const DoctorFacts& f) {
    if (!f.cudaBuilt || f.gpus.isEmpty() || f.driverVersion == 0 || f.driverVersion < f.runtimeVersion)
        return false;
    for (const auto& g : f.gpus)
        if (g.major >= kBuiltMajor) return true;
    return false;
}

QString Doctor::report(const DoctorFacts& f) {
    QStringList lines;
    if (!f.cpuKernels.isEmpty())
        lines << tr("CPU kernels: %1").arg(f.cpuKernels == QLatin1String("avx512") ? QStringLiteral("AVX-512")
                                                                                   : QStringLiteral("AVX2"));
    if (!f.cudaBuilt) {
        lines << tr("This Kiln was built without the CUDA backend.");
        lines << tr("Kiln trains on the CPU.");
        return lines.join(QLatin1Char('\n'));
    }
    lines << (f.driverVersion > 0 ? tr("NVIDIA driver: supports CUDA %1").arg(cudaVersion(f.driverVersion))
                                  : tr("NVIDIA driver: not found"));
    lines << tr("CUDA runtime: %1").arg(cudaVersion(f.runtimeVersion));
    lines << (f.cudnnVersion > 0 ? tr("cuDNN: %1 (built with %2)")
                                       .arg(libVersion(f.cudnnVersion, 10000, 100), f.cudnnBuiltWith)
                                 : tr("cuDNN: not loadable"));
    lines << (f.ncclVersion > 0 ? tr("NCCL: %1").arg(libVersion(f.ncclVersion, 10000, 100))
                                : tr("NCCL: not available (multi-GPU training is off)"));
    for (const auto& g : f.gpus)
        lines << tr("GPU %1: %2, compute capability %3.%4, %5 GiB free of %6 GiB")
                     .arg(g.index)
                     .arg(g.name)
                     .arg(g.major)
                     .arg(g.minor)
                     .arg(gib(g.freeMemory), gib(g.totalMemory));

    // Findings, each with what to do.
    QStringList problems;
    if (f.driverVersion == 0)
        problems << tr(
            "No NVIDIA driver is installed or it could not be loaded; install the driver for your GPU.");
    else if (f.driverVersion < f.runtimeVersion)
        problems << tr("The driver supports CUDA %1, older than the CUDA %2 runtime Kiln uses; update the "
                       "NVIDIA driver.")
                        .arg(cudaVersion(f.driverVersion), cudaVersion(f.runtimeVersion));
    if (f.driverVersion > 0 && f.gpus.isEmpty())
        problems << tr("The driver sees no GPU (%1).").arg(f.unavailableReason);
    for (const auto& g : f.gpus) {
        if (g.major < kBuiltMajor)
            problems << tr("GPU %1 has compute capability %2.%3; Kiln's GPU kernels need 9.0 or newer "
                           "(Hopper and later).")
                            .arg(g.index)
                            .arg(g.major)
                            .arg(g.minor);
        if (g.totalMemory > 0 && g.freeMemory < g.totalMemory / 10)
            problems << tr("GPU %1 has only %2 GiB free: another program is using it.")
                            .arg(g.index)
                            .arg(gib(g.freeMemory));
    }
    if (f.cudnnVersion > 0 && !f.cudnnBuiltWith.isEmpty() &&
        QString::number(f.cudnnVersion / 10000) != f.cudnnBuiltWith.section(QLatin1Char('.'), 0, 0))
        problems << tr("The loaded cuDNN %1 is another major version than the %2 Kiln was built with; "
                       "install cuDNN %3.")
                        .arg(libVersion(f.cudnnVersion, 10000, 100), f.cudnnBuiltWith,
                             f.cudnnBuiltWith.section(QLatin1Char('.'), 0, 0));
    if (f.cudnnVersion == 0) problems << tr("cuDNN cannot be loaded; convolutions cannot run on the GPU.");
    lines += problems;

    if (gpuReady(f))
        lines << tr("Kiln can train on the GPU (--device cuda:0).");
    else
        lines << tr("Kiln trains on the CPU.");
    return lines.join(QLatin1Char('\n'));
}

}  // namespace kiln::app
