// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels Qt6::Core
// Parity of the raw CPU kernels with PyTorch: inputs are generated here, written as raw
// float32 files, evaluated by tests/interop/torch_kernels.py under Debian's python3-torch, and
// the outputs and gradients compared at 1e-4 relative (max abs error over max magnitude).
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/conv2d.h"
#include "engine/ops/kernels/gemm.h"
#include "engine/ops/kernels/image.h"
#include "engine/ops/kernels/normalization.h"
#include "engine/ops/kernels/pooling.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, which has python3-torch
constexpr double kTolerance = 1e-4;

using Shape = std::vector<int64_t>;

struct Tensor {
    Shape shape;
    std::vector<float> data;
};

int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

Tensor randomTensor(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    Tensor t{std::move(shape), {}};
    t.data.resize(size_t(numel(t.shape)));
    for (auto& v : t.data) v = dist(rng);
    return t;
}

double relErr(const std::vector<float>& ours, const std::vector<float>& ref) {
    if (ours.size() != ref.size()) return INFINITY;
    double err = 0.0, mag = 1e-30;
    for (size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(ours[i])) return INFINITY;
        err = std::max(err, std::abs(double(ours[i]) - double(ref[i])));
        mag = std::max(mag, std::abs(double(ref[i])));
    }
    return err / mag;
}

struct Conv2DCase {
    const char* name;
    int64_t n, h, w, c, kh, kw, oc, sh, sw, dh, dw;
    bool same;
    int64_t groups;
};

const Conv2DCase kConvCases[] = {
    {"conv_groups2_stride2_same", 2, 9, 8, 4, 3, 3, 6, 2, 2, 1, 1, true, 2},
    {"conv_dilation2_same", 1, 10, 9, 3, 3, 3, 5, 1, 1, 2, 2, true, 1},
    {"conv_depthwise_mult2", 2, 8, 7, 4, 3, 3, 8, 1, 1, 1, 1, true, 4},
    {"conv_depthwise_stride2_same", 1, 9, 9, 5, 5, 5, 5, 2, 2, 1, 1, true, 5},
    {"conv_valid_2x3_stride1x2", 3, 7, 9, 5, 2, 3, 4, 1, 2, 1, 1, false, 1},
    {"conv_pointwise", 2, 5, 6, 8, 1, 1, 12, 1, 1, 1, 1, false, 1},
};

struct PoolCase {
    const char* name;
    int64_t n, h, w, c, ph, pw, sh, sw;
    bool same;
};

const PoolCase kPoolCases[] = {
    {"2x2_s2_valid", 2, 6, 8, 3, 2, 2, 2, 2, false},
    {"3x3_s2_same", 2, 7, 6, 3, 3, 3, 2, 2, true},
    {"2x2_s2_same_odd", 1, 5, 7, 4, 2, 2, 2, 2, true},
    {"3x3_s1_same", 1, 5, 5, 2, 3, 3, 1, 1, true},
};

struct UpsampleCase {
    const char* name;
    int64_t h, w, sh, sw;
    bool bilinear;
};

const UpsampleCase kUpsampleCases[] = {
    {"upsample_nearest_2x3", 4, 5, 2, 3, false},
    {"upsample_bilinear_2x2", 4, 5, 2, 2, true},
    {"upsample_bilinear_3x4", 3, 4, 3, 4, true},
};

}  // namespace

class TestTorchKernels : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void dense();
    void conv2d_data();
    void conv2d();
    void batchNormTraining();
    void layerNorm();
    void maxPool_data();
    void maxPool();
    void avgPool_data();
    void avgPool();
    void globalAveragePool();
    void globalMaxPool();
    void upsample_data();
    void upsample();
    void softmaxCrossEntropy();

private:
    void addCase(const QString& name, const QString& op, const QJsonObject& attrs,
                 const std::map<std::string, Tensor>& tensors);
    const Tensor& in(const QString& caseName, const std::string& tensor) const;
    std::vector<float> torchOut(const QString& caseName, const QString& output) const;
    void compare(const QString& caseName, const QString& output, const std::vector<float>& ours);

    QTemporaryDir m_dir;
    QJsonArray m_cases;
    std::map<QString, std::map<std::string, Tensor>> m_inputs;
    QJsonObject m_results;
    ThreadPool m_pool{2};
};

void TestTorchKernels::addCase(const QString& name, const QString& op, const QJsonObject& attrs,
                               const std::map<std::string, Tensor>& tensors) {
    QJsonObject shapes;
    for (const auto& [key, t] : tensors) {
        QJsonArray shape;
        for (int64_t d : t.shape) shape.append(qint64(d));
        shapes[QString::fromStdString(key)] = shape;
        QFile f(m_dir.filePath(name + "." + QString::fromStdString(key) + ".bin"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        // x86-64 is little-endian, so the in-memory floats are the file format.
        f.write(reinterpret_cast<const char*>(t.data.data()), qint64(t.data.size() * sizeof(float)));
    }
    m_cases.append(QJsonObject{{"name", name}, {"op", op}, {"attrs", attrs}, {"tensors", shapes}});
    m_inputs[name] = tensors;
}

const Tensor& TestTorchKernels::in(const QString& caseName, const std::string& tensor) const {
    return m_inputs.at(caseName).at(tensor);
}

std::vector<float> TestTorchKernels::torchOut(const QString& caseName, const QString& output) const {
    QFile f(m_dir.filePath(caseName + ".out." + output + ".bin"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray bytes = f.readAll();
    std::vector<float> v(size_t(bytes.size()) / sizeof(float));
    std::memcpy(v.data(), bytes.constData(), v.size() * sizeof(float));
    return v;
}

void TestTorchKernels::compare(const QString& caseName, const QString& output,
                               const std::vector<float>& ours) {
    const auto ref = torchOut(caseName, output);
    QVERIFY2(!ref.empty(), qPrintable(QString("%1: torch wrote no %2").arg(caseName, output)));
    const double err = relErr(ours, ref);
    QVERIFY2(err <= kTolerance, qPrintable(QString("%1 %2: relative error %3 (size %4 vs %5)")
                                               .arg(caseName, output)
                                               .arg(err)
                                               .arg(ours.size())
                                               .arg(ref.size())));
}

void TestTorchKernels::initTestCase() {
    {
        QProcess probe;
        probe.start(kPython, {"-c", "import torch"});
        if (!probe.waitForFinished(60000) || probe.exitStatus() != QProcess::NormalExit ||
            probe.exitCode() != 0)
            QSKIP(
                "PyTorch is not importable by /usr/bin/python3 (install Debian's python3-torch); "
                "skipping the PyTorch parity checks");
    }
    QVERIFY(m_dir.isValid());
    uint32_t seed = 1000;

    // Dense: y = x W + b with W [in, out].
    addCase("dense", "dense", {},
            {{"x", randomTensor({5, 7}, seed++)},
             {"w", randomTensor({7, 4}, seed++)},
             {"b", randomTensor({4}, seed++)},
             {"dy", randomTensor({5, 4}, seed++)}});

    for (const auto& cc : kConvCases) {
        const Conv2DGeom g = makeConv2DGeom(cc.n, cc.h, cc.w, cc.c, cc.kh, cc.kw, cc.oc, cc.sh, cc.sw, cc.dh,
                                            cc.dw, cc.same, cc.groups);
        addCase(cc.name, "conv2d",
                {{"kh", qint64(cc.kh)},
                 {"kw", qint64(cc.kw)},
                 {"sh", qint64(cc.sh)},
                 {"sw", qint64(cc.sw)},
                 {"dh", qint64(cc.dh)},
                 {"dw", qint64(cc.dw)},
                 {"same", cc.same},
                 {"groups", qint64(cc.groups)}},
                {{"x", randomTensor({cc.n, cc.h, cc.w, cc.c}, seed++)},
                 {"w", randomTensor({cc.kh, cc.kw, cc.c / cc.groups, cc.oc}, seed++)},
                 {"b", randomTensor({cc.oc}, seed++)},
                 {"dy", randomTensor({g.n, g.oh, g.ow, g.oc}, seed++)}});
    }

    addCase("batchnorm", "batchnorm", {{"momentum", 0.9}, {"epsilon", 1e-3}},
            {{"x", randomTensor({3, 4, 5, 6}, seed++, 1.0f, 3.0f)},
             {"gamma", randomTensor({6}, seed++, 0.5f, 1.5f)},
             {"beta", randomTensor({6}, seed++)},
             {"moving_mean", randomTensor({6}, seed++)},
             {"moving_var", randomTensor({6}, seed++, 0.5f, 1.5f)},
             {"dy", randomTensor({3, 4, 5, 6}, seed++)}});

    addCase("layernorm", "layernorm", {{"epsilon", 1e-3}},
            {{"x", randomTensor({4, 3, 10}, seed++, -2.0f, 3.0f)},
             {"gamma", randomTensor({10}, seed++, 0.5f, 1.5f)},
             {"beta", randomTensor({10}, seed++)},
             {"dy", randomTensor({4, 3, 10}, seed++)}});

    for (const char* op : {"maxpool", "avgpool"})
        for (const auto& pc : kPoolCases) {
            const Pool2DGeom g = makePool2DGeom(pc.n, pc.h, pc.w, pc.c, pc.ph, pc.pw, pc.sh, pc.sw, pc.same);
            addCase(QString("%1_%2").arg(op, pc.name), op,
                    {{"ph", qint64(pc.ph)},
                     {"pw", qint64(pc.pw)},
                     {"sh", qint64(pc.sh)},
                     {"sw", qint64(pc.sw)},
                     {"same", pc.same}},
                    {{"x", randomTensor({pc.n, pc.h, pc.w, pc.c}, seed++)},
                     {"dy", randomTensor({g.n, g.oh, g.ow, g.c}, seed++)}});
        }

    addCase("global_avg", "global_avg", {},
            {{"x", randomTensor({2, 5, 3, 7}, seed++)}, {"dy", randomTensor({2, 7}, seed++)}});

    addCase("global_max", "global_max", {},
            {{"x", randomTensor({2, 5, 3, 7}, seed++)}, {"dy", randomTensor({2, 7}, seed++)}});

    for (const auto& uc : kUpsampleCases)
        addCase(uc.name, "upsample", {{"sh", qint64(uc.sh)}, {"sw", qint64(uc.sw)}, {"bilinear", uc.bilinear}},
                {{"x", randomTensor({2, uc.h, uc.w, 3}, seed++)},
                 {"dy", randomTensor({2, uc.h * uc.sh, uc.w * uc.sw, 3}, seed++)}});

    Tensor labels{{6}, {0, 3, 6, 2, 2, 5}};
    addCase("softmax_xent", "softmax_xent", {},
            {{"logits", randomTensor({6, 7}, seed++, -4.0f, 4.0f)}, {"labels", labels}});

    QFile cases(m_dir.filePath("cases.json"));
    QVERIFY(cases.open(QIODevice::WriteOnly));
    cases.write(QJsonDocument(QJsonObject{{"cases", m_cases}}).toJson());
    cases.close();

    QProcess py;
    py.setProcessChannelMode(QProcess::MergedChannels);
    py.start(kPython, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/torch_kernels.py"), m_dir.path()});
    QVERIFY2(py.waitForFinished(120000), "torch_kernels.py did not finish in 120 s");
    const QByteArray log = py.readAll();
    QVERIFY2(py.exitStatus() == QProcess::NormalExit && py.exitCode() == 0, log.constData());

    QFile results(m_dir.filePath("results.json"));
    QVERIFY(results.open(QIODevice::ReadOnly));
    m_results = QJsonDocument::fromJson(results.readAll()).object();
    QCOMPARE(m_results.size(), m_cases.size());
}

void TestTorchKernels::dense() {
    const Tensor &x = in("dense", "x"), &w = in("dense", "w"), &b = in("dense", "b"), &dy = in("dense", "dy");
    const int64_t M = 5, K = 7, N = 4;
    std::vector<float> y(M * N);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) y[i * N + j] = b.data[j];
    gemm(false, false, M, N, K, 1.0f, x.data.data(), K, w.data.data(), N, 1.0f, y.data(), N, m_pool);
    std::vector<float> dx(M * K), dw(K * N), db(N, 0.0f), ws(biasGradWorkspaceFloats(M, N));
    gemm(false, true, M, K, N, 1.0f, dy.data.data(), N, w.data.data(), N, 0.0f, dx.data(), K, m_pool);
    gemm(true, false, K, N, M, 1.0f, x.data.data(), K, dy.data.data(), N, 0.0f, dw.data(), N, m_pool);
    biasGradAccumulate(M, N, dy.data.data(), db.data(), ws.data(), m_pool);
    compare("dense", "y", y);
    compare("dense", "dx", dx);
    compare("dense", "dw", dw);
    compare("dense", "db", db);
}

void TestTorchKernels::conv2d_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < std::size(kConvCases); ++i) QTest::newRow(kConvCases[i].name) << int(i);
}

void TestTorchKernels::conv2d() {
    QFETCH(int, index);
    const Conv2DCase& cc = kConvCases[index];
    const QString name = cc.name;
    const Conv2DGeom g = makeConv2DGeom(cc.n, cc.h, cc.w, cc.c, cc.kh, cc.kw, cc.oc, cc.sh, cc.sw, cc.dh,
                                        cc.dw, cc.same, cc.groups);
    const Tensor &x = in(name, "x"), &w = in(name, "w"), &b = in(name, "b"), &dy = in(name, "dy");
    std::vector<float> ws(conv2dWorkspaceFloats(g)), y(dy.data.size());
    conv2dForward(g, x.data.data(), w.data.data(), b.data.data(), y.data(), ws.data(), m_pool);
    std::vector<float> dx(x.data.size(), 0.0f), dw(w.data.size(), 0.0f), db(b.data.size(), 0.0f);
    conv2dBackward(g, x.data.data(), w.data.data(), dy.data.data(), dx.data(), dw.data(), db.data(),
                   ws.data(), m_pool);
    compare(name, "y", y);
    compare(name, "dx", dx);
    compare(name, "dw", dw);
    compare(name, "db", db);
}

void TestTorchKernels::batchNormTraining() {
    const Tensor &x = in("batchnorm", "x"), &gamma = in("batchnorm", "gamma"),
                 &beta = in("batchnorm", "beta"), &mm0 = in("batchnorm", "moving_mean"),
                 &mv0 = in("batchnorm", "moving_var"), &dy = in("batchnorm", "dy");
    const int64_t c = 6, rows = numel(x.shape) / c;
    BatchNormParams p;
    p.momentum = 0.9f;
    p.epsilon = 1e-3f;
    p.unbiasedMovingVariance = true;  // PyTorch's convention, so the moving variance compares directly
    std::vector<float> y(x.data.size()), mean(c), inv(c), mm = mm0.data, mv = mv0.data;
    batchNormForwardTraining(rows, c, x.data.data(), gamma.data.data(), beta.data.data(), p, y.data(),
                             mean.data(), inv.data(), mm.data(), mv.data(), m_pool);
    std::vector<float> dx(x.data.size(), 0.0f), dg(c, 0.0f), db(c, 0.0f);
    batchNormBackwardTraining(rows, c, x.data.data(), gamma.data.data(), mean.data(), inv.data(),
                              dy.data.data(), dx.data(), dg.data(), db.data(), m_pool);
    compare("batchnorm", "y", y);
    compare("batchnorm", "dx", dx);
    compare("batchnorm", "dgamma", dg);
    compare("batchnorm", "dbeta", db);
    compare("batchnorm", "moving_mean", mm);
    compare("batchnorm", "moving_var_unbiased", mv);

    // Keras's default (biased) moving variance: moving*m + biased_batch_var*(1 - m), with the
    // biased batch variance taken from torch.
    p.unbiasedMovingVariance = false;
    std::vector<float> mvBiased = mv0.data;
    batchNormForwardTraining(rows, c, x.data.data(), gamma.data.data(), beta.data.data(), p, y.data(),
                             mean.data(), inv.data(), nullptr, mvBiased.data(), m_pool);
    const auto batchVar = torchOut("batchnorm", "batch_var_biased");
    QCOMPARE(batchVar.size(), size_t(c));
    std::vector<float> expect(c);
    for (int64_t ci = 0; ci < c; ++ci)
        expect[ci] = float(double(mv0.data[ci]) * double(p.momentum) +
                           double(batchVar[ci]) * (1.0 - double(p.momentum)));
    QVERIFY(relErr(mvBiased, expect) <= kTolerance);
}

void TestTorchKernels::layerNorm() {
    const Tensor &x = in("layernorm", "x"), &gamma = in("layernorm", "gamma"),
                 &beta = in("layernorm", "beta"), &dy = in("layernorm", "dy");
    const int64_t c = 10, rows = numel(x.shape) / c;
    std::vector<float> y(x.data.size()), mean(rows), rstd(rows);
    layerNormForward(rows, c, x.data.data(), gamma.data.data(), beta.data.data(), 1e-3f, y.data(),
                     mean.data(), rstd.data(), m_pool);
    std::vector<float> dx(x.data.size(), 0.0f), dg(c, 0.0f), db(c, 0.0f);
    layerNormBackward(rows, c, x.data.data(), gamma.data.data(), mean.data(), rstd.data(), dy.data.data(),
                      dx.data(), dg.data(), db.data(), m_pool);
    compare("layernorm", "y", y);
    compare("layernorm", "dx", dx);
    compare("layernorm", "dgamma", dg);
    compare("layernorm", "dbeta", db);
}

void TestTorchKernels::maxPool_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < std::size(kPoolCases); ++i) QTest::newRow(kPoolCases[i].name) << int(i);
}

void TestTorchKernels::maxPool() {
    QFETCH(int, index);
    const PoolCase& pc = kPoolCases[index];
    const QString name = QString("maxpool_%1").arg(pc.name);
    const Pool2DGeom g = makePool2DGeom(pc.n, pc.h, pc.w, pc.c, pc.ph, pc.pw, pc.sh, pc.sw, pc.same);
    const Tensor &x = in(name, "x"), &dy = in(name, "dy");
    std::vector<float> y(dy.data.size()), dx(x.data.size(), 0.0f);
    std::vector<int32_t> idx(maxPool2DIndexCount(g));
    maxPool2DForward(g, x.data.data(), y.data(), idx.data(), m_pool);
    maxPool2DBackward(g, dy.data.data(), idx.data(), dx.data(), m_pool);
    compare(name, "y", y);
    compare(name, "dx", dx);
}

void TestTorchKernels::avgPool_data() {
    maxPool_data();
}

void TestTorchKernels::avgPool() {
    QFETCH(int, index);
    const PoolCase& pc = kPoolCases[index];
    const QString name = QString("avgpool_%1").arg(pc.name);
    const Pool2DGeom g = makePool2DGeom(pc.n, pc.h, pc.w, pc.c, pc.ph, pc.pw, pc.sh, pc.sw, pc.same);
    const Tensor &x = in(name, "x"), &dy = in(name, "dy");
    std::vector<float> y(dy.data.size()), dx(x.data.size(), 0.0f);
    avgPool2DForward(g, x.data.data(), y.data(), m_pool);
    avgPool2DBackward(g, dy.data.data(), dx.data(), m_pool);
    compare(name, "y", y);
    compare(name, "dx", dx);
}

void TestTorchKernels::globalAveragePool() {
    const Tensor &x = in("global_avg", "x"), &dy = in("global_avg", "dy");
    std::vector<float> y(dy.data.size()), dx(x.data.size(), 0.0f);
    globalAvgPool2DForward(2, 5, 3, 7, x.data.data(), y.data(), m_pool);
    globalAvgPool2DBackward(2, 5, 3, 7, dy.data.data(), dx.data(), m_pool);
    compare("global_avg", "y", y);
    compare("global_avg", "dx", dx);
}

void TestTorchKernels::globalMaxPool() {
    const Tensor &x = in("global_max", "x"), &dy = in("global_max", "dy");
    std::vector<float> y(dy.data.size()), dx(x.data.size(), 0.0f);
    std::vector<int32_t> argmax(dy.data.size());
    globalMaxPool2DForward(2, 5, 3, 7, x.data.data(), y.data(), argmax.data(), m_pool);
    globalMaxPool2DBackward(2, 5, 3, 7, dy.data.data(), argmax.data(), dx.data(), m_pool);
    compare("global_max", "y", y);
    compare("global_max", "dx", dx);
}

void TestTorchKernels::upsample_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < std::size(kUpsampleCases); ++i) QTest::newRow(kUpsampleCases[i].name) << int(i);
}

void TestTorchKernels::upsample() {
    QFETCH(int, index);
    const auto& uc = kUpsampleCases[index];
    const QString name = uc.name;
    const Tensor &x = in(name, "x"), &dy = in(name, "dy");
    const kiln::engine::kernels::Upsample2DGeom g{2, uc.h, uc.w, 3, uc.sh, uc.sw, uc.bilinear};
    std::vector<float> y(dy.data.size()), dx(x.data.size(), 0.0f);
    upsample2DForward(g, x.data.data(), y.data(), m_pool);
    upsample2DBackward(g, dy.data.data(), dx.data(), m_pool);
    compare(name, "y", y);
    compare(name, "dx", dx);
}

void TestTorchKernels::softmaxCrossEntropy() {
    // Reference math kept here: loss = mean_b(logsumexp(z_b) - z_b[label_b]),
    // dL/dz_b = (softmax(z_b) - onehot(label_b)) / batch, with the max subtracted for stability.
    const Tensor &logits = in("softmax_xent", "logits"), &labels = in("softmax_xent", "labels");
    const int64_t batch = 6, classes = 7;
    double loss = 0.0;
    std::vector<float> grad(size_t(batch * classes));
    for (int64_t b = 0; b < batch; ++b) {
        const float* z = logits.data.data() + b * classes;
        const int64_t label = int64_t(labels.data[b]);
        const float zmax = *std::max_element(z, z + classes);
        double sum = 0.0;
        for (int64_t k = 0; k < classes; ++k) sum += std::exp(double(z[k] - zmax));
        const double lse = std::log(sum) + zmax;
        loss += (lse - z[label]) / batch;
        for (int64_t k = 0; k < classes; ++k)
            grad[b * classes + k] = float((std::exp(double(z[k]) - lse) - (k == label ? 1.0 : 0.0)) / batch);
    }
    compare("softmax_xent", "loss", {float(loss)});
    compare("softmax_xent", "dlogits", grad);
}

QTEST_APPLESS_MAIN(TestTorchKernels)
#include "tst_torch_kernels.moc"
