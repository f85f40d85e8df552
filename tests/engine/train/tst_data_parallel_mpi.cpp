// SPDX-License-Identifier: Apache-2.0
// Data parallel over MPI: this program runs itself under `mpirun -np 2`; each rank trains one
// replica on its shard with MpiReducer, rank 0 writes the weights, and the test compares them
// with two in-process replicas on the same batches. Skips when MPI or mpirun is missing.
// kiln-test-libs: kiln_train kiln_mpi
#include <QtTest>

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/data_parallel.h"
#ifdef KILN_HAVE_MPI
#include "engine/train/mpi/mpi_reducer.h"
#endif

using namespace kiln::engine;
using namespace kiln::engine::train;

namespace {

constexpr int kSteps = 4;
constexpr int64_t kBatch = 8;
constexpr int64_t kFeatures = 10;
constexpr int kClasses = 3;

ops::ModelInfo model() {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [10]}},
      {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 16, "activation": "relu"}},
      {"name": "bn", "op": "BatchNormalization", "inputs": ["h"]},
      {"name": "logits", "op": "Dense", "inputs": ["bn"], "attrs": {"units": 3}}]}})";
    auto p = io::parseProject(text, "mpi.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

DataParallelOptions options() {
    DataParallelOptions o;
    o.globalBatch = kBatch;
    o.syncBatchNorm = true;
    o.seed = 3;
    exec::LossSpec l;
    l.type = "SparseCategoricalCrossentropy";
    l.output = "logits";
    l.attrs.set("from_logits", true);
    l.targetShape = Shape{};
    o.losses = {l};
    o.optimizer.type = "adam";
    o.optimizer.learningRate = 0.01;
    return o;
}

// Trains on the fixed batches; returns the concatenated parameters of local replica 0.
Result<std::vector<float>> run(DataParallel& dp) {
    for (int s = 0; s < kSteps; ++s) {
        std::vector<float> x(static_cast<size_t>(kBatch * kFeatures)), y(static_cast<size_t>(kBatch));
        for (size_t i = 0; i < x.size(); ++i) x[i] = rng::normal(9, static_cast<uint64_t>(s), i);
        for (size_t i = 0; i < y.size(); ++i)
            y[i] = static_cast<float>(rng::bits(8, static_cast<uint64_t>(s), i) % kClasses);
        const float* in[] = {x.data()};
        const float* tg[] = {y.data()};
        KILN_TRY(dp.loadGlobalBatch(in, tg));
        KILN_TRY(dp.step(0.01, static_cast<uint64_t>(s)));
    }
    std::vector<float> all;
    for (const auto& p : dp.params(0).params())
        all.insert(all.end(), p.value.data<float>(), p.value.data<float>() + p.value.numel());
    return all;
}

#ifdef KILN_HAVE_MPI
// The rank program: exit status 0 on success; rank 0 writes raw floats to argv's file.
int rankMain(const char* outPath) {
    auto reducer = createMpiReducer();
    if (!reducer.ok()) {
        std::fprintf(stderr, "%s\n", reducer.error().toString().c_str());
        return 3;
    }
    const int rank = (*reducer)->rank();
    auto dp = DataParallel::createDistributed(model(), options(), std::move(reducer).value());
    if (!dp.ok()) {
        std::fprintf(stderr, "%s\n", dp.error().toString().c_str());
        return 4;
    }
    auto w = run(**dp);
    if (!w.ok()) {
        std::fprintf(stderr, "%s\n", w.error().toString().c_str());
        return 5;
    }
    if (rank == 0) {
        FILE* f = std::fopen(outPath, "wb");
        if (!f || std::fwrite(w->data(), sizeof(float), w->size(), f) != w->size()) return 6;
        std::fclose(f);
    }
    dp->reset();
    finalizeMpi();
    return 0;
}
#endif

}  // namespace

class TestDataParallelMpi : public QObject {
    Q_OBJECT

private slots:
    void twoRanksMatchInProcess() {
#ifndef KILN_HAVE_MPI
        QSKIP("built without MPI");
#else
        const QString mpirun = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
        if (mpirun.isEmpty()) QSKIP("mpirun is not installed");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString out = dir.filePath(QStringLiteral("weights.bin"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
        env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
        env.insert(QStringLiteral("OMPI_MCA_rmaps_base_oversubscribe"), QStringLiteral("1"));
#ifdef __SANITIZE_ADDRESS__
        // Open MPI's own allocations outlive MPI_Finalize (tools/sanitizer/lsan.supp names them by
        // library); its code has no frame pointers, so the ranks unwind allocation stacks fully,
        // or LeakSanitizer could not see which library a leaked block came from.
        env.insert(QStringLiteral("ASAN_OPTIONS"), env.value(QStringLiteral("ASAN_OPTIONS")) + QStringLiteral(":fast_unwind_on_malloc=0"));
#endif
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(mpirun, {QStringLiteral("-np"), QStringLiteral("2"), QStringLiteral("--oversubscribe"),
                         QCoreApplication::applicationFilePath(), QStringLiteral("--mpi-rank"), out});
        QVERIFY2(p.waitForFinished(120000), "mpirun did not finish");
        const QByteArray log = p.readAll();
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, log.constData());

        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        std::vector<float> mpi(static_cast<size_t>(bytes.size()) / sizeof(float));
        std::memcpy(mpi.data(), bytes.constData(), static_cast<size_t>(bytes.size()));

        auto local = DataParallel::createLocal(model(), options(), 2);
        QVERIFY(local.ok());
        auto ref = run(**local);
        QVERIFY(ref.ok());
        QCOMPARE(mpi.size(), ref->size());
        double worst = 0;
        for (size_t i = 0; i < mpi.size(); ++i) worst = std::max(worst, double(std::abs(mpi[i] - (*ref)[i])));
        QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
        // And the run changed the weights at all.
        auto fresh = DataParallel::createLocal(model(), options(), 1);
        QVERIFY(fresh.ok());
        double moved = 0;
        size_t at = 0;
        for (const auto& prm : (*fresh)->params(0).params())
            for (int64_t i = 0; i < prm.value.numel(); ++i)
                moved = std::max(moved, double(std::abs(prm.value.data<float>()[i] - mpi[at++])));
        QVERIFY(moved > 1e-3);
#endif
    }
};

int main(int argc, char** argv) {
#ifdef KILN_HAVE_MPI
    if (argc == 3 && std::string(argv[1]) == "--mpi-rank") return rankMain(argv[2]);
#endif
    QCoreApplication app(argc, argv);
    TestDataParallelMpi t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_data_parallel_mpi.moc"
