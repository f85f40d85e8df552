// SPDX-License-Identifier: Apache-2.0
// `kiln-train --doctor`: what this machine offers for training (driver, CUDA runtime, cuDNN,
// NCCL, GPUs with compute capability and free memory) and which mismatches stop GPU training, in
// the user's language.
#pragma once

#include <QCoreApplication>
#include <QList>
#include <QString>

namespace kiln::app {

struct DoctorFacts {
    QString cpuKernels;      // the CPU kernel variant this process runs: "avx2" or "avx512"
    bool cudaBuilt = false;  // this Kiln was compiled with the CUDA backend
    int driverVersion = 0;   // CUDA version the driver supports (13000 = 13.0); 0: no driver
    int runtimeVersion = 0;  // CUDA runtime Kiln uses
    int cudnnVersion = 0;    // loaded cuDNN (91900 = 9.19.0)
    QString cudnnBuiltWith;  // "9.19.0"
    int ncclVersion = 0;     // 22809 = 2.28.9; 0: built without NCCL
    QString unavailableReason;
    struct Gpu {
        int index = 0;
        QString name;
        int major = 0, minor = 0;
        quint64 totalMemory = 0, freeMemory = 0;
    };
    QList<Gpu> gpus;
};

class Doctor {
    Q_DECLARE_TR_FUNCTIONS(Doctor)

public:
    // Facts of this machine and this build (never fails; without CUDA everything is zero).
    static DoctorFacts gather();
    // The report as plain text, one finding per line, ending with a verdict.
    static QString report(const DoctorFacts& facts);
    static QString report() { return report(gather()); }
    // True when training on a GPU can start (used for kiln-train's exit status).
    static bool gpuReady(const DoctorFacts& facts);
};

}  // namespace kiln::app
