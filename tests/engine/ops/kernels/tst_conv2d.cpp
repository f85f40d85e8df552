// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// kiln-test-avx2
// Conv2D kernels against naive double-precision loops and finite differences, across strides,
// paddings, dilations, groups, depthwise multipliers, odd sizes and batch sizes.
#include <QtTest/QtTest>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <vector>

#include "engine/core/cpu_isa.h"
#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/conv2d.h"
#include "engine/ops/kernels/tile_kernels.h"

// ---- Heap interposition: every allocation by any thread of this process is counted, so the
// test can prove that warm conv2d calls never touch the heap.
// glibc's own allocator entry points, which the counting functions below forward to.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}
// NOLINTEND(bugprone-reserved-identifier)
namespace {
std::atomic<long> g_heapCalls{0};
void countHeapCall() {
    g_heapCalls.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace
// AddressSanitizer owns the C allocator (and replaces it before main): these counting
// replacements would run before it is initialised, so a sanitizer build leaves them out and skips
// the functions that count.
#ifndef __SANITIZE_ADDRESS__
extern "C" {
void* malloc(size_t n) {
    countHeapCall();
    return __libc_malloc(n);
}
void* calloc(size_t n, size_t s) {
    countHeapCall();
    return __libc_calloc(n, s);
}
void* realloc(void* p, size_t n) {
    countHeapCall();
    return __libc_realloc(p, n);
}
void free(void* p) {
    if (p) countHeapCall();
    __libc_free(p);
}
void* aligned_alloc(size_t a, size_t n) {
    countHeapCall();
    return __libc_memalign(a, n);
}
void* memalign(size_t a, size_t n) {
    countHeapCall();
    return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
    countHeapCall();
    void* p = __libc_memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
}
void* operator new(size_t n) {
    if (void* p = malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](size_t n) {
    return operator new(n);
}
void operator delete(void* p) noexcept {
    free(p);
}
void operator delete[](void* p) noexcept {
    free(p);
}
void operator delete(void* p, size_t) noexcept {
    free(p);
}
void operator delete[](void* p, size_t) noexcept {
    free(p);
}
#endif

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

std::vector<float> randomVector(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

// max|a - b| / max|b|: a norm-style relative error that is not fooled by tiny entries.
template <typename A, typename B>
double relErr(const A& a, const B& b) {
    double err = 0.0, mag = 1e-30;
    for (size_t i = 0; i < b.size(); ++i) {
        err = std::max(err, std::abs(double(a[i]) - double(b[i])));
        mag = std::max(mag, std::abs(double(b[i])));
        if (!std::isfinite(double(a[i]))) return INFINITY;
    }
    return err / mag;
}

struct Spec {
    const char* name;
    int64_t n, h, w, c, kh, kw, oc, sh, sw, dh, dw;
    bool same;
    int64_t groups;
    bool bias;
};

const Spec kSpecs[] = {
    {"3x3 same s1", 1, 5, 5, 3, 3, 3, 4, 1, 1, 1, 1, true, 1, true},
    {"3x3 same s2 batch3", 3, 7, 6, 4, 3, 3, 6, 2, 2, 1, 1, true, 1, true},
    {"3x2 valid s2x1", 3, 7, 6, 4, 3, 2, 5, 2, 1, 1, 1, false, 1, false},
    {"3x3 same dil2", 1, 9, 8, 3, 3, 3, 4, 1, 1, 2, 2, true, 1, true},
    {"3x3 valid dil2x1 s1x2 groups2", 2, 8, 7, 4, 3, 3, 6, 1, 2, 2, 1, false, 2, true},
    {"depthwise m1 same", 3, 6, 7, 6, 3, 3, 6, 1, 1, 1, 1, true, 6, true},
    {"depthwise m3 5x5 s2", 1, 7, 7, 4, 5, 5, 12, 2, 2, 1, 1, true, 4, true},
    {"depthwise m2 dil2 valid", 2, 9, 8, 3, 3, 3, 6, 1, 1, 2, 2, false, 3, false},
    {"pointwise", 3, 5, 5, 8, 1, 1, 16, 1, 1, 1, 1, true, 1, true},
    {"pointwise groups2", 1, 5, 5, 8, 1, 1, 6, 1, 1, 1, 1, false, 2, true},
    {"single channel in (direct path)", 1, 9, 9, 1, 3, 3, 8, 1, 1, 1, 1, false, 1, true},
    {"4x4 same s3 odd pads", 3, 11, 10, 5, 4, 4, 7, 3, 3, 1, 1, true, 1, true},
    {"1x1 s2 valid", 1, 6, 6, 3, 1, 1, 5, 2, 2, 1, 1, false, 1, true},
    {"kernel larger than image", 1, 4, 4, 2, 5, 5, 3, 1, 1, 1, 1, true, 1, true},
    {"groups4 dil2 s2", 1, 5, 5, 16, 3, 3, 8, 2, 2, 2, 2, true, 4, false},
    {"multi-tile im2col", 2, 40, 40, 64, 3, 3, 16, 1, 1, 1, 1, true, 1, true},
    // Direct-path kernels: two and four output vectors, row reuse for 3- and 5-wide kernels,
    // several filter-gradient chunks, vector tails, strided gathers, the small-c scatter form of
    // backward-data, and more taps than one kernel call takes.
    {"16->32 s1 batch 18", 18, 12, 12, 16, 3, 3, 32, 1, 1, 1, 1, true, 1, false},
    {"32->64 s2", 4, 10, 10, 32, 3, 3, 64, 2, 2, 1, 1, true, 1, false},
    // Stride 2, "same", odd sizes (padding on both sides) and a ragged channel vector: dy read in
    // place with one padding column on the left.
    {"20->32 s2 same odd", 2, 9, 11, 20, 3, 3, 32, 2, 2, 1, 1, true, 1, true},
    {"20->80 s1 tails", 2, 7, 9, 20, 3, 3, 80, 1, 1, 1, 1, true, 1, true},
    {"lenet 5x5 1->6 same", 18, 12, 12, 1, 5, 5, 6, 1, 1, 1, 1, true, 1, true},
    {"lenet 5x5 6->16 valid", 3, 14, 14, 6, 5, 5, 16, 1, 1, 1, 1, false, 1, true},
    {"5x5 48->40 same", 2, 9, 11, 48, 5, 5, 40, 1, 1, 1, 1, true, 1, false},
    {"3x3 s2 valid 16->16", 2, 9, 9, 16, 3, 3, 16, 2, 2, 1, 1, false, 1, true},
    {"1x1 s2 16->64", 3, 8, 8, 16, 1, 1, 64, 2, 2, 1, 1, false, 1, false},
    {"7x7 s2 same 3->16", 2, 15, 15, 3, 7, 7, 16, 2, 2, 1, 1, true, 1, true},
    {"5x5 dil2 12->20 scatter", 2, 11, 11, 12, 5, 5, 20, 1, 1, 2, 2, true, 1, true},
    {"9x9 dil2 17->5 many taps", 1, 20, 20, 17, 9, 9, 5, 1, 1, 2, 2, true, 1, true},
    {"3x3 s1 16->16 wide rows", 2, 6, 37, 16, 3, 3, 16, 1, 1, 1, 1, true, 1, false},
    {"3x3 s1 64->64 rows too wide for the rings", 1, 5, 100, 64, 3, 3, 64, 1, 1, 1, 1, true, 1, true},
    {"3x3 same 8->16 scatter", 2, 12, 12, 8, 3, 3, 16, 1, 1, 1, 1, true, 1, true},
    // Unpadded 3-wide rows whose one tile both starts and ends in the padding.
    {"3x3 same s1 one column 16->48", 2, 5, 1, 16, 3, 3, 48, 1, 1, 1, 1, true, 1, true},
    {"3x3 same s1 two columns 32->32", 2, 4, 2, 32, 3, 3, 32, 1, 1, 1, 1, true, 1, false},
    // Strided rows read unpadded: padding on the right only (even width), and one output column.
    {"3x3 same s2 even 16->32", 2, 8, 8, 16, 3, 3, 32, 2, 2, 1, 1, true, 1, true},
    {"3x3 same s2 one column 16->16", 2, 5, 2, 16, 3, 3, 16, 2, 2, 1, 1, true, 1, false},
    // Filter-gradient chunks of 2-3 output rows that cross image boundaries (unpadded input),
    // with whole and part-filled last vectors of output channels.
    {"3x3 valid batch 20 chunks across images 8->24", 20, 4, 4, 8, 3, 3, 24, 1, 1, 1, 1, false, 1, true},
    {"3x3 valid batch 20 chunks across images 8->20", 20, 4, 5, 8, 3, 3, 20, 1, 1, 1, 1, false, 1, false},
};

Conv2DGeom geomOf(const Spec& s) {
    return makeConv2DGeom(s.n, s.h, s.w, s.c, s.kh, s.kw, s.oc, s.sh, s.sw, s.dh, s.dw, s.same, s.groups);
}

// Naive convolution in double: y[b,oy,ox,o] = bias[o] + sum_{ky,kx,ci} x * w.
std::vector<double> refForward(const Conv2DGeom& g, const std::vector<float>& x, const std::vector<float>& w,
                               const float* bias) {
    const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
    std::vector<double> y(size_t(g.n * g.oh * g.ow * g.oc));
    for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox)
                for (int64_t o = 0; o < g.oc; ++o) {
                    const int64_t gi = o / ocg;
                    double s = bias ? bias[o] : 0.0;
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                        if (iy < 0 || iy >= g.h) continue;
                        for (int64_t kx = 0; kx < g.kw; ++kx) {
                            const int64_t ix = ox * g.strideW - g.padLeft + kx * g.dilationW;
                            if (ix < 0 || ix >= g.w) continue;
                            for (int64_t ci = 0; ci < cg; ++ci)
                                s += double(x[((b * g.h + iy) * g.w + ix) * g.c + gi * cg + ci]) *
                                     w[((ky * g.kw + kx) * cg + ci) * g.oc + o];
                        }
                    }
                    y[((b * g.oh + oy) * g.ow + ox) * g.oc + o] = s;
                }
    return y;
}

void refBackward(const Conv2DGeom& g, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>& dy, std::vector<double>& dx, std::vector<double>& dw,
                 std::vector<double>& db) {
    const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
    dx.assign(x.size(), 0.0);
    dw.assign(w.size(), 0.0);
    db.assign(size_t(g.oc), 0.0);
    for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox)
                for (int64_t o = 0; o < g.oc; ++o) {
                    const int64_t gi = o / ocg;
                    const double d = dy[((b * g.oh + oy) * g.ow + ox) * g.oc + o];
                    db[o] += d;
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                        if (iy < 0 || iy >= g.h) continue;
                        for (int64_t kx = 0; kx < g.kw; ++kx) {
                            const int64_t ix = ox * g.strideW - g.padLeft + kx * g.dilationW;
                            if (ix < 0 || ix >= g.w) continue;
                            for (int64_t ci = 0; ci < cg; ++ci) {
                                const size_t xi = size_t(((b * g.h + iy) * g.w + ix) * g.c + gi * cg + ci);
                                const size_t wi = size_t(((ky * g.kw + kx) * cg + ci) * g.oc + o);
                                dx[xi] += d * w[wi];
                                dw[wi] += d * x[xi];
                            }
                        }
                    }
                }
}

constexpr float kGuard = 12345.0f;
constexpr size_t kGuardFloats = 64;

struct Fixture {
    Conv2DGeom g;
    std::vector<float> x, w, bias, dy, ws;
    explicit Fixture(const Spec& s, uint32_t seed) : g(geomOf(s)) {
        x = randomVector(size_t(g.n * g.h * g.w * g.c), seed);
        w = randomVector(size_t(g.kh * g.kw * (g.c / g.groups) * g.oc), seed + 1);
        bias = randomVector(size_t(g.oc), seed + 2);
        dy = randomVector(size_t(g.n * g.oh * g.ow * g.oc), seed + 3);
        // Guard floats past the declared workspace catch overruns.
        ws.assign(conv2dWorkspaceFloats(g) + kGuardFloats, kGuard);
    }
    bool guardIntact() const {
        for (size_t i = ws.size() - kGuardFloats; i < ws.size(); ++i)
            if (ws[i] != kGuard) return false;
        return true;
    }
    const float* biasPtr(const Spec& s) const { return s.bias ? bias.data() : nullptr; }
};

// Sum(dy * y) in double, y from the kernel under test.
double loss(const Fixture& f, const std::vector<float>& x, const std::vector<float>& w, const float* bias,
            ThreadPool& pool) {
    std::vector<float> y(f.dy.size());
    std::vector<float> ws(f.ws.size());
    conv2dForward(f.g, x.data(), w.data(), bias, y.data(), ws.data(), pool);
    double s = 0.0;
    for (size_t i = 0; i < y.size(); ++i) s += double(f.dy[i]) * y[i];
    return s;
}

}  // namespace

class TestConv2D : public QObject {
    Q_OBJECT

private slots:
    void kernelVariant();
    void geometry();
    void forward_data();
    void forward();
    void backwardAnalytic_data();
    void backwardAnalytic();
    void backwardFiniteDifferences_data();
    void backwardFiniteDifferences();
    void accumulatesAndIsDeterministic_data();
    void accumulatesAndIsDeterministic();
    void nullableGradients();
    void overwriteDx_data();
    void overwriteDx();
    void fusedRelu_data();
    void fusedRelu();
    void threadCountIndependent_data();
    void threadCountIndependent();
    void noAllocationAfterWarmup_data();
    void noAllocationAfterWarmup();
    void winogradMatchesDirect_data();
    void winogradMatchesDirect();
    void winograd4x4MatchesDirect_data();
    void winograd4x4MatchesDirect();
    void winogradOnlyWhereItApplies();
    void throughput();
};

static void addSpecRows() {
    QTest::addColumn<int>("spec");
    for (size_t i = 0; i < std::size(kSpecs); ++i) QTest::newRow(kSpecs[i].name) << int(i);
}

// The variant under test is the one asked for: KILN_CPU_ISA=avx2 must really run the AVX2 kernels
// (the _avx2 ctest entry), otherwise the best the processor has.
void TestConv2D::kernelVariant() {
    const QByteArray want = qgetenv("KILN_CPU_ISA");
    const CpuIsa expected = want == "avx2" ? CpuIsa::Avx2 : cpuIsaSupported();
    QCOMPARE(cpuIsa(), expected);
    qInfo("direct kernels: %s", std::string(cpuIsaName(cpuIsa())).c_str());
}

void TestConv2D::geometry() {
    // 'same': out = ceil(in / stride), extra padding goes bottom/right.
    auto a = kerasWindowAxis(7, 3, 2, 1, true);
    QCOMPARE(a.out, int64_t(4));
    QCOMPARE(a.padBefore, int64_t(1));  // total = 3*2+3-7 = 2
    a = kerasWindowAxis(6, 3, 2, 1, true);
    QCOMPARE(a.out, int64_t(3));
    QCOMPARE(a.padBefore, int64_t(0));  // total = 1: all after
    a = kerasWindowAxis(10, 4, 3, 1, true);
    QCOMPARE(a.out, int64_t(4));
    QCOMPARE(a.padBefore, int64_t(1));  // total = 9+4-10 = 3
    a = kerasWindowAxis(9, 3, 1, 2, true);
    QCOMPARE(a.out, int64_t(9));
    QCOMPARE(a.padBefore, int64_t(2));  // effective k = 5
    // 'valid'
    a = kerasWindowAxis(7, 3, 2, 1, false);
    QCOMPARE(a.out, int64_t(3));
    a = kerasWindowAxis(9, 3, 1, 2, false);
    QCOMPARE(a.out, int64_t(5));
    a = kerasWindowAxis(4, 5, 1, 1, false);
    QCOMPARE(a.out, int64_t(0));
    Conv2DGeom g = makeConv2DGeom(2, 7, 6, 4, 3, 3, 6, 2, 2, 1, 1, true, 2);
    QCOMPARE(g.oh, int64_t(4));
    QCOMPARE(g.ow, int64_t(3));
    QVERIFY(conv2dGeomIsValid(g));
    QVERIFY(!conv2dGeomIsValid(makeConv2DGeom(1, 5, 5, 3, 3, 3, 4, 1, 1, 1, 1, true, 2)));
    QVERIFY(!conv2dGeomIsValid(makeConv2DGeom(1, 4, 4, 2, 5, 5, 3, 1, 1, 1, 1, false, 1)));
}

void TestConv2D::forward_data() {
    addSpecRows();
}

void TestConv2D::forward() {
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 10 + spec);
    QVERIFY(conv2dGeomIsValid(f.g));
    ThreadPool pool(2);
    std::vector<float> y(f.dy.size(), NAN);  // forward must overwrite everything
    conv2dForward(f.g, f.x.data(), f.w.data(), f.biasPtr(s), y.data(), f.ws.data(), pool);
    QVERIFY(f.guardIntact());
    const auto ref = refForward(f.g, f.x, f.w, f.biasPtr(s));
    const double err = relErr(y, ref);
    if (err > 1e-5) qWarning("forward rel err %g", err);
    QVERIFY(err <= 1e-5);
}

void TestConv2D::backwardAnalytic_data() {
    addSpecRows();
}

void TestConv2D::backwardAnalytic() {
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 20 + spec);
    ThreadPool pool(2);
    std::vector<float> dx(f.x.size(), 0.0f), dw(f.w.size(), 0.0f), db(f.bias.size(), 0.0f);
    conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(), f.ws.data(),
                   pool);
    QVERIFY(f.guardIntact());
    std::vector<double> rdx, rdw, rdb;
    refBackward(f.g, f.x, f.w, f.dy, rdx, rdw, rdb);
    const double ex = relErr(dx, rdx), ew = relErr(dw, rdw), eb = relErr(db, rdb);
    if (ex > 1e-4 || ew > 1e-4 || eb > 1e-4) qWarning("dx %g dw %g db %g", ex, ew, eb);
    QVERIFY(ex <= 1e-4);
    QVERIFY(ew <= 1e-4);
    QVERIFY(eb <= 1e-4);
}

void TestConv2D::backwardFiniteDifferences_data() {
    addSpecRows();
}

void TestConv2D::backwardFiniteDifferences() {
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 30 + spec);
    ThreadPool pool(2);
    std::vector<float> dx(f.x.size(), 0.0f), dw(f.w.size(), 0.0f), db(f.bias.size(), 0.0f);
    conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(), f.ws.data(),
                   pool);

    // The loss is linear in each parameter, so central differences have no truncation error at any
    // step; a step of 1e-2 keeps the kernels' rounding (Winograd F(4x4) rounds about 1e-5 of the
    // largest output) well below the difference being measured.
    const double eps = 1e-2;
    std::mt19937 rng(99 + spec);
    // Checks `samples` random entries of `param` (perturbed through `bump`) against `grad`.
    auto check = [&](const char* what, std::vector<float>& param, const std::vector<float>& grad,
                     auto&& lossOf) {
        const int samples = std::min<int>(12, int(param.size()));
        std::vector<double> fd, an;
        for (int k = 0; k < samples; ++k) {
            const size_t i = std::uniform_int_distribution<size_t>(0, param.size() - 1)(rng);
            const float saved = param[i];
            param[i] = float(saved + eps);
            const double lp = lossOf();
            param[i] = float(saved - eps);
            const double lm = lossOf();
            param[i] = saved;
            fd.push_back((lp - lm) / (2 * eps));
            an.push_back(grad[i]);
        }
        const double err = relErr(fd, an);
        if (err > 1e-2) qWarning("%s: finite-difference rel err %g", what, err);
        return err <= 1e-2;
    };
    QVERIFY(check("dx", f.x, dx, [&] { return loss(f, f.x, f.w, f.biasPtr(s), pool); }));
    QVERIFY(check("dw", f.w, dw, [&] { return loss(f, f.x, f.w, f.biasPtr(s), pool); }));
    QVERIFY(check("db", f.bias, db, [&] { return loss(f, f.x, f.w, f.bias.data(), pool); }));
}

void TestConv2D::accumulatesAndIsDeterministic_data() {
    addSpecRows();
}

void TestConv2D::accumulatesAndIsDeterministic() {
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 40 + spec);
    ThreadPool pool(2);
    auto run = [&](int times, std::vector<float>& y, std::vector<float>& dx, std::vector<float>& dw,
                   std::vector<float>& db) {
        y.assign(f.dy.size(), 0.0f);
        dx.assign(f.x.size(), 0.0f);
        dw.assign(f.w.size(), 0.0f);
        db.assign(f.bias.size(), 0.0f);
        conv2dForward(f.g, f.x.data(), f.w.data(), f.biasPtr(s), y.data(), f.ws.data(), pool);
        for (int t = 0; t < times; ++t)
            conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(),
                           f.ws.data(), pool);
    };
    std::vector<float> y1, dx1, dw1, db1, y2, dx2, dw2, db2, y3, dx3, dw3, db3;
    run(1, y1, dx1, dw1, db1);
    run(1, y2, dx2, dw2, db2);
    auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    QVERIFY(same(y1, y2));
    QVERIFY(same(dx1, dx2));
    QVERIFY(same(dw1, dw2));
    QVERIFY(same(db1, db2));
    run(2, y3, dx3, dw3, db3);
    auto doubled = [](std::vector<float> v) {
        for (auto& e : v) e *= 2.0f;
        return v;
    };
    QVERIFY(relErr(dx3, doubled(dx1)) <= 1e-6);
    QVERIFY(relErr(dw3, doubled(dw1)) <= 1e-6);
    QVERIFY(relErr(db3, doubled(db1)) <= 1e-6);
}

void TestConv2D::overwriteDx_data() {
    addSpecRows();
}

// dx written with overwriteDx over garbage equals dx accumulated into zeros, bit for bit, on every
// path (direct gather, direct scatter, pointwise, im2col, depthwise) and for input pixels that no
// output reads (strided 1x1 kernels).
void TestConv2D::overwriteDx() {
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 60 + spec);
    ThreadPool pool(2);
    std::vector<float> dxAdd(f.x.size(), 0.0f), dwAdd(f.w.size(), 0.0f);
    conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dxAdd.data(), dwAdd.data(), nullptr, f.ws.data(), pool);
    std::vector<float> dxSet(f.x.size(), std::numeric_limits<float>::quiet_NaN()), dwSet(f.w.size(), 0.0f);
    conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dxSet.data(), dwSet.data(), nullptr, f.ws.data(), pool,
                   /*overwriteDx=*/true);
    QVERIFY(std::memcmp(dxAdd.data(), dxSet.data(), dxAdd.size() * sizeof(float)) == 0);
    QVERIFY(std::memcmp(dwAdd.data(), dwSet.data(), dwAdd.size() * sizeof(float)) == 0);
}

void TestConv2D::nullableGradients() {
    // Each gradient alone equals the same gradient computed together with the others.
    for (const Spec& s : {kSpecs[1], kSpecs[5], kSpecs[8]}) {
        Fixture f(s, 50);
        ThreadPool pool(2);
        std::vector<float> dx(f.x.size(), 0.0f), dw(f.w.size(), 0.0f), db(f.bias.size(), 0.0f);
        conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(), f.ws.data(),
                       pool);
        std::vector<float> dx1(f.x.size(), 0.0f), dw1(f.w.size(), 0.0f), db1(f.bias.size(), 0.0f);
        conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx1.data(), nullptr, nullptr, f.ws.data(),
                       pool);
        conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), nullptr, dw1.data(), nullptr, f.ws.data(),
                       pool);
        conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), nullptr, nullptr, db1.data(), f.ws.data(),
                       pool);
        QCOMPARE(relErr(dx1, dx), 0.0);
        QCOMPARE(relErr(dw1, dw), 0.0);
        QCOMPARE(relErr(db1, db), 0.0);
    }
}

void TestConv2D::fusedRelu_data() {
    addSpecRows();
}

void TestConv2D::fusedRelu() {
    // The fused ReLU equals a separate max(y, 0) pass, bit for bit.
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 70 + spec);
    ThreadPool pool(2);
    std::vector<float> y(f.dy.size()), yr(f.dy.size(), NAN);
    conv2dForward(f.g, f.x.data(), f.w.data(), f.biasPtr(s), y.data(), f.ws.data(), pool);
    conv2dForward(f.g, f.x.data(), f.w.data(), f.biasPtr(s), yr.data(), f.ws.data(), pool, true);
    QVERIFY(f.guardIntact());
    for (auto& v : y) v = v < 0.0f ? 0.0f : v;
    QVERIFY(std::memcmp(y.data(), yr.data(), y.size() * sizeof(float)) == 0);
}

void TestConv2D::threadCountIndependent_data() {
    addSpecRows();
}

void TestConv2D::threadCountIndependent() {
    // The direct kernels (groups == 1 on AVX-512 builds) give every reduction a fixed order, so
    // 1, 2 and 3 threads give the same bits; elsewhere the bias gradient still does.
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
#if defined(__AVX512F__)
    const bool direct = s.groups == 1 && s.kh * s.kw <= 256;
#else
    const bool direct = false;
#endif
    Fixture f(s, 80 + spec);
    auto run = [&](int threads, std::vector<float>& y, std::vector<float>& dx, std::vector<float>& dw,
                   std::vector<float>& db) {
        ThreadPool pool(threads);
        y.assign(f.dy.size(), 0.0f);
        dx.assign(f.x.size(), 0.0f);
        dw.assign(f.w.size(), 0.0f);
        db.assign(f.bias.size(), 0.0f);
        conv2dForward(f.g, f.x.data(), f.w.data(), f.biasPtr(s), y.data(), f.ws.data(), pool);
        conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(), f.ws.data(),
                       pool);
    };
    auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    std::vector<float> y1, dx1, dw1, db1, y3, dx3, dw3, db3;
    run(1, y1, dx1, dw1, db1);
    for (int threads : {2, 3}) {
        run(threads, y3, dx3, dw3, db3);
        QVERIFY(same(db1, db3));
        if (!direct) continue;
        QVERIFY(same(y1, y3));
        QVERIFY(same(dx1, dx3));
        QVERIFY(same(dw1, dw3));
    }
}

void TestConv2D::noAllocationAfterWarmup_data() {
    addSpecRows();
}

void TestConv2D::noAllocationAfterWarmup() {
#ifdef __SANITIZE_ADDRESS__
    QSKIP("allocations are not counted under AddressSanitizer, which owns the C allocator");
#endif
    QFETCH(int, spec);
    const Spec& s = kSpecs[spec];
    Fixture f(s, 60 + spec);
    ThreadPool pool(2);
    std::vector<float> y(f.dy.size()), dx(f.x.size(), 0.0f), dw(f.w.size(), 0.0f), db(f.bias.size(), 0.0f);
    auto step = [&] {
        conv2dForward(f.g, f.x.data(), f.w.data(), f.biasPtr(s), y.data(), f.ws.data(), pool);
        conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(), f.ws.data(),
                       pool);
    };
    step();  // warm-up: GEMM pack buffers grow on each thread
    const long before = g_heapCalls.load();
    step();
    QCOMPARE(g_heapCalls.load() - before, 0L);
}

// 3x3 unit-stride layers that take the Winograd kernels: ResNet-8's shapes (small batches),
// odd sizes (tiles cut by the bottom and right edges), 'valid' padding, channel counts that
// leave part of the last vector empty, more rows than one block of tiles, and filter-gradient
// chunks of more than one block.
const Spec kWinogradSpecs[] = {
    {"s1 16->16 same", 3, 32, 32, 16, 3, 3, 16, 1, 1, 1, 1, true, 1, false},
    {"s2 32->32 same", 2, 16, 16, 32, 3, 3, 32, 1, 1, 1, 1, true, 1, true},
    {"s3 64->64 same", 3, 8, 8, 64, 3, 3, 64, 1, 1, 1, 1, true, 1, false},
    {"odd 7x9 16->32 same", 2, 7, 9, 16, 3, 3, 32, 1, 1, 1, 1, true, 1, true},
    {"odd 7x9 32->48 same", 2, 7, 9, 32, 3, 3, 48, 1, 1, 1, 1, true, 1, true},
    {"valid 9x6 24->20", 2, 9, 6, 24, 3, 3, 20, 1, 1, 1, 1, false, 1, true},
    {"valid 9x6 40->36", 2, 9, 6, 40, 3, 3, 36, 1, 1, 1, 1, false, 1, true},
    {"one column 5x1 32->48 same", 2, 5, 1, 32, 3, 3, 48, 1, 1, 1, 1, true, 1, true},
    {"tails 3x5 36->80 same", 3, 3, 5, 36, 3, 3, 80, 1, 1, 1, 1, true, 1, false},
    // Filter-gradient chunks of tiles that span more than one block of tiles.
    {"many tiles 40x40 16->16 same", 4, 40, 40, 16, 3, 3, 16, 1, 1, 1, 1, true, 1, false},
    {"wide 16x16 128->128 same", 2, 16, 16, 128, 3, 3, 128, 1, 1, 1, 1, true, 1, true},
};

// The direct kernels of this process's instruction set, bypassing the Winograd choice.
void directForwardOnly(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                       float* ws, ThreadPool& pool, bool relu) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::directConvForward(g, x, w, bias, y, ws, pool, relu);
    else
        avx2::directConvForward(g, x, w, bias, y, ws, pool, relu);
}
void directBackwardDataOnly(const Conv2DGeom& g, const float* w, const float* dy, float* dx, float* ws,
                            ThreadPool& pool, bool overwrite) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::directConvBackward(g, nullptr, w, dy, dx, nullptr, nullptr, ws, pool, overwrite);
    else
        avx2::directConvBackward(g, nullptr, w, dy, dx, nullptr, nullptr, ws, pool, overwrite);
}
void directBackwardFilterOnly(const Conv2DGeom& g, const float* x, const float* dy, float* dw, float* ws,
                              ThreadPool& pool) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::directConvBackward(g, x, nullptr, dy, nullptr, dw, nullptr, ws, pool, false);
    else
        avx2::directConvBackward(g, x, nullptr, dy, nullptr, dw, nullptr, ws, pool, false);
}

void TestConv2D::winogradMatchesDirect_data() {
    QTest::addColumn<int>("spec");
    for (size_t i = 0; i < std::size(kWinogradSpecs); ++i) QTest::newRow(kWinogradSpecs[i].name) << int(i);
}

void TestConv2D::winogradMatchesDirect() {
    // Winograd F(2x2, 3x3) sums in another order than the direct kernels: forward (with bias and
    // the fused ReLU), backward-data (overwriting and accumulating) and the filter gradient agree
    // with them, and with the double-precision reference, to 1e-5 of the largest output
    // (max |a - b| / max |b|), and give the same bits with 1, 2 and 3 threads.
    // F(4x4, 3x3), where conv2d picks it, rounds more (see winograd4x4MatchesDirect).
    QFETCH(int, spec);
    const Spec& s = kWinogradSpecs[spec];
    Fixture f(s, 90 + spec);
    const double kTol = conv2dWinogradTile(f.g) == 4 ? 2e-5 : 1e-5;
    // From 16 channels on both sides, the filter gradient takes Winograd with either instruction set.
    QVERIFY(conv2dUsesWinogradFilterGrad(f.g));
    ThreadPool pool(2);
    std::vector<float> ws(f.ws.size());
    double worst = 0.0;
    auto check = [&](const char* what, double err) {
        worst = std::max(worst, err);
        if (err > kTol) qWarning("%s: rel err %g", what, err);
        return err <= kTol;
    };
    std::vector<double> rdx, rdw, rdb;
    refBackward(f.g, f.x, f.w, f.dy, rdx, rdw, rdb);
    {
        // The filter gradient accumulates: dw += dL/dw onto a random start.
        const std::vector<float> start = randomVector(f.w.size(), 8);
        std::vector<float> dw(start), dwd(start);
        conv2dBackward(f.g, f.x.data(), nullptr, f.dy.data(), nullptr, dw.data(), nullptr, f.ws.data(), pool);
        QVERIFY(f.guardIntact());
        directBackwardFilterOnly(f.g, f.x.data(), f.dy.data(), dwd.data(), ws.data(), pool);
        QVERIFY(check("dw vs direct", relErr(dw, dwd)));
        std::vector<double> expect(rdw);
        for (size_t i = 0; i < expect.size(); ++i) expect[i] += start[i];
        QVERIFY(check("dw vs reference", relErr(dw, expect)));
        for (int threads : {1, 3}) {
            ThreadPool other(threads);
            std::vector<float> dwt(start);
            conv2dBackward(f.g, f.x.data(), nullptr, f.dy.data(), nullptr, dwt.data(), nullptr, f.ws.data(), other);
            QVERIFY(std::memcmp(dwt.data(), dw.data(), dw.size() * sizeof(float)) == 0);
        }
    }
    if (cpuIsa() == CpuIsa::Avx512 && (s.c < 32 || s.oc < 32) && conv2dWinogradTile(f.g) != 4) {
        QVERIFY(!conv2dUsesWinograd(f.g));
        QSKIP("fewer than 32 channels and no F(4x4): forward and backward-data on the direct kernels with AVX-512");
    }
    QVERIFY(conv2dUsesWinograd(f.g));
    const float* bias = f.biasPtr(s);
    for (bool relu : {false, true}) {
        std::vector<float> y(f.dy.size(), NAN), yd(f.dy.size(), NAN);
        conv2dForward(f.g, f.x.data(), f.w.data(), bias, y.data(), f.ws.data(), pool, relu);
        QVERIFY(f.guardIntact());
        directForwardOnly(f.g, f.x.data(), f.w.data(), bias, yd.data(), ws.data(), pool, relu);
        QVERIFY(check("forward vs direct", relErr(y, yd)));
        if (!relu) QVERIFY(check("forward vs reference", relErr(y, refForward(f.g, f.x, f.w, bias))));
        if (relu)
            for (float v : y) QVERIFY(v >= 0.0f);
    }
    const std::vector<float> start = randomVector(f.x.size(), 7);
    for (bool overwrite : {true, false}) {
        std::vector<float> dx(start), dxd(start);
        conv2dBackward(f.g, nullptr, f.w.data(), f.dy.data(), dx.data(), nullptr, nullptr, f.ws.data(), pool,
                       overwrite);
        QVERIFY(f.guardIntact());
        directBackwardDataOnly(f.g, f.w.data(), f.dy.data(), dxd.data(), ws.data(), pool, overwrite);
        QVERIFY(check("dx vs direct", relErr(dx, dxd)));
        std::vector<double> expect(rdx);
        if (!overwrite)
            for (size_t i = 0; i < expect.size(); ++i) expect[i] += start[i];
        QVERIFY(check("dx vs reference", relErr(dx, expect)));
    }
    // dx and dw together: the same bits as each alone.
    std::vector<float> dx(f.x.size(), 0.0f), dw(f.w.size(), 0.0f), db(f.bias.size(), 0.0f);
    std::vector<float> dw1(f.w.size(), 0.0f), db1(f.bias.size(), 0.0f);
    conv2dBackward(f.g, f.x.data(), f.w.data(), f.dy.data(), dx.data(), dw.data(), db.data(), f.ws.data(), pool);
    conv2dBackward(f.g, f.x.data(), nullptr, f.dy.data(), nullptr, dw1.data(), db1.data(), f.ws.data(), pool);
    QVERIFY(f.guardIntact());
    QCOMPARE(relErr(dw, dw1), 0.0);
    QCOMPARE(relErr(db, db1), 0.0);
    qInfo("largest relative difference: %.3g", worst);
}

// F(4x4, 3x3) of this process's instruction set, whatever conv2d would pick for the geometry.
size_t winograd4Workspace(const Conv2DGeom& g) {
    return cpuIsa() == CpuIsa::Avx512 ? avx512::winogradWorkspaceFloats(g, 4, 4)
                                      : avx2::winogradWorkspaceFloats(g, 4, 4);
}
void winograd4Forward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y, float* ws,
                      ThreadPool& pool, bool relu) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::winogradConvForward(g, 4, x, w, bias, y, ws, pool, relu);
    else
        avx2::winogradConvForward(g, 4, x, w, bias, y, ws, pool, relu);
}
void winograd4BackwardFilter(const Conv2DGeom& g, const float* x, const float* dy, float* dw, float* ws,
                             ThreadPool& pool) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::winogradConvBackwardFilter(g, 4, x, dy, dw, ws, pool);
    else
        avx2::winogradConvBackwardFilter(g, 4, x, dy, dw, ws, pool);
}
void winograd4BackwardData(const Conv2DGeom& g, const float* w, const float* dy, float* dx, float* ws,
                           ThreadPool& pool, bool overwrite) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::winogradConvBackwardData(g, 4, w, dy, dx, ws, pool, overwrite);
    else
        avx2::winogradConvBackwardData(g, 4, w, dy, dx, ws, pool, overwrite);
}

void TestConv2D::winograd4x4MatchesDirect_data() {
    QTest::addColumn<int>("spec");
    for (size_t i = 0; i < std::size(kWinogradSpecs); ++i) QTest::newRow(kWinogradSpecs[i].name) << int(i);
}

void TestConv2D::winograd4x4MatchesDirect() {
    // F(4x4, 3x3) on every Winograd shape (edges that cut 4x4 tiles, 'valid' padding, partial
    // vectors, images smaller than a tile's patch), called directly: forward (with bias and the
    // fused ReLU), backward-data (overwriting and accumulating) and the filter gradient
    // (accumulating; several chunks of tiles and blocks per chunk) agree with the direct kernels
    // and the double-precision reference to 2e-5 of the largest output, and give the same bits
    // with 1, 2 and 3 threads. Its transforms' constants (1/24 to 8) round more than F(2x2)'s
    // (at most about 1e-5 here, against about 1e-6).
    constexpr double kTol = 2e-5;
    QFETCH(int, spec);
    const Spec& s = kWinogradSpecs[spec];
    Fixture f(s, 190 + spec);
    std::vector<float> ws(winograd4Workspace(f.g) + kGuardFloats, kGuard), wsd(f.ws.size());
    auto guardIntact = [&] {
        for (size_t i = ws.size() - kGuardFloats; i < ws.size(); ++i)
            if (ws[i] != kGuard) return false;
        return true;
    };
    ThreadPool pool(2);
    double worst = 0.0;
    auto check = [&](const char* what, double err) {
        worst = std::max(worst, err);
        if (err > kTol) qWarning("%s: rel err %g", what, err);
        return err <= kTol;
    };
    auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
        return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    const float* bias = f.biasPtr(s);
    for (bool relu : {false, true}) {
        std::vector<float> y(f.dy.size(), NAN), yd(f.dy.size(), NAN);
        winograd4Forward(f.g, f.x.data(), f.w.data(), bias, y.data(), ws.data(), pool, relu);
        QVERIFY(guardIntact());
        directForwardOnly(f.g, f.x.data(), f.w.data(), bias, yd.data(), wsd.data(), pool, relu);
        QVERIFY(check("forward vs direct", relErr(y, yd)));
        if (!relu) QVERIFY(check("forward vs reference", relErr(y, refForward(f.g, f.x, f.w, bias))));
        if (relu)
            for (float v : y) QVERIFY(v >= 0.0f);
        for (int threads : {1, 3}) {
            ThreadPool other(threads);
            std::vector<float> yt(f.dy.size(), NAN);
            winograd4Forward(f.g, f.x.data(), f.w.data(), bias, yt.data(), ws.data(), other, relu);
            QVERIFY(same(yt, y));
        }
    }
    {
        // Inputs as a ReLU leaves them (none negative, so the sums do not cancel as much).
        std::vector<float> xr(f.x);
        for (float& v : xr) v = std::fabs(v);
        std::vector<float> y(f.dy.size(), NAN);
        winograd4Forward(f.g, xr.data(), f.w.data(), bias, y.data(), ws.data(), pool, false);
        QVERIFY(check("forward (inputs >= 0) vs reference", relErr(y, refForward(f.g, xr, f.w, bias))));
    }
    std::vector<double> rdx, rdw, rdb;
    refBackward(f.g, f.x, f.w, f.dy, rdx, rdw, rdb);
    const std::vector<float> start = randomVector(f.x.size(), 7);
    for (bool overwrite : {true, false}) {
        std::vector<float> dx(start), dxd(start);
        winograd4BackwardData(f.g, f.w.data(), f.dy.data(), dx.data(), ws.data(), pool, overwrite);
        QVERIFY(guardIntact());
        directBackwardDataOnly(f.g, f.w.data(), f.dy.data(), dxd.data(), wsd.data(), pool, overwrite);
        QVERIFY(check("dx vs direct", relErr(dx, dxd)));
        std::vector<double> expect(rdx);
        if (!overwrite)
            for (size_t i = 0; i < expect.size(); ++i) expect[i] += start[i];
        QVERIFY(check("dx vs reference", relErr(dx, expect)));
        for (int threads : {1, 3}) {
            ThreadPool other(threads);
            std::vector<float> dxt(start);
            winograd4BackwardData(f.g, f.w.data(), f.dy.data(), dxt.data(), ws.data(), other, overwrite);
            QVERIFY(same(dxt, dx));
        }
    }
    const double worstForwardDx = worst;
    worst = 0.0;
    {
        const std::vector<float> dwStart = randomVector(f.w.size(), 8);
        std::vector<float> dw(dwStart), dwd(dwStart);
        winograd4BackwardFilter(f.g, f.x.data(), f.dy.data(), dw.data(), ws.data(), pool);
        QVERIFY(guardIntact());
        directBackwardFilterOnly(f.g, f.x.data(), f.dy.data(), dwd.data(), wsd.data(), pool);
        QVERIFY(check("dw vs direct", relErr(dw, dwd)));
        std::vector<double> expect(rdw);
        for (size_t i = 0; i < expect.size(); ++i) expect[i] += dwStart[i];
        QVERIFY(check("dw vs reference", relErr(dw, expect)));
        for (int threads : {1, 3}) {
            ThreadPool other(threads);
            std::vector<float> dwt(dwStart);
            winograd4BackwardFilter(f.g, f.x.data(), f.dy.data(), dwt.data(), ws.data(), other);
            QVERIFY(same(dwt, dw));
        }
    }
    qInfo("largest relative difference: forward and dx %.3g, dw %.3g", worstForwardDx, worst);
}

void TestConv2D::winogradOnlyWhereItApplies() {
    // Strided, dilated, grouped, non-3x3, narrow and very wide layers keep the direct (or
    // grouped) kernels.
    QVERIFY(conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 32, 3, 3, 32, 1, 1, 1, 1, true)));
    QVERIFY(conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 32, 3, 3, 64, 1, 1, 1, 1, false)));
    // F(4x4) from 16 to 64 channels and 8x8 outputs with either instruction set, F(2x2) beyond
    // (from 16 channels with AVX2, 32 with AVX-512: there 16-channel layers measured no faster).
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 1, 1, 1, 1, true)), 4);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 32, 32, 16, 3, 3, 64, 1, 1, 1, 1, true)), 4);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 10, 10, 64, 3, 3, 16, 1, 1, 1, 1, false)), 4);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 8, 8, 64, 3, 3, 128, 1, 1, 1, 1, true)), 2);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 7, 8, 32, 3, 3, 32, 1, 1, 1, 1, true)), 2);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 9, 9, 32, 3, 3, 32, 1, 1, 1, 1, false)), 2);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 4, 4, 16, 3, 3, 16, 1, 1, 1, 1, true)),
             cpuIsa() == CpuIsa::Avx2 ? 2 : 0);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 2, 2, 1, 1, true)), 0);
    QCOMPARE(conv2dWinogradTile(makeConv2DGeom(1, 8, 8, 8, 3, 3, 16, 1, 1, 1, 1, true)), 0);
    // The filter gradient: F(4x4) where forward takes it, up to 32 channels.
    QCOMPARE(conv2dWinogradFilterGradTile(makeConv2DGeom(1, 32, 32, 16, 3, 3, 16, 1, 1, 1, 1, true)), 4);
    QCOMPARE(conv2dWinogradFilterGradTile(makeConv2DGeom(1, 16, 16, 32, 3, 3, 32, 1, 1, 1, 1, true)), 4);
    QCOMPARE(conv2dWinogradFilterGradTile(makeConv2DGeom(1, 8, 8, 64, 3, 3, 64, 1, 1, 1, 1, true)), 2);
    QCOMPARE(conv2dWinogradFilterGradTile(makeConv2DGeom(1, 7, 8, 32, 3, 3, 32, 1, 1, 1, 1, true)), 2);
    QCOMPARE(conv2dWinogradFilterGradTile(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 2, 2, 1, 1, true)), 0);
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 32, 3, 3, 1001, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 2, 2, 1, 1, true)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 1, 1, 2, 2, true)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 1, 1, 1, 1, true, 2)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 16, 5, 5, 16, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 16, 3, 1, 16, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 3, 3, 3, 16, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinograd(makeConv2DGeom(1, 8, 8, 16, 3, 3, 8, 1, 1, 1, 1, true)));
    // The filter gradient: from 16 channels with either instruction set, up to c x oc = 65536.
    QVERIFY(conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 1, 1, 1, 1, true)));
    QVERIFY(conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 256, 3, 3, 256, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 256, 3, 3, 257, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 2, 2, 1, 1, true)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 1, 1, 2, 2, true)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 16, 3, 3, 16, 1, 1, 1, 1, true, 2)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 16, 5, 5, 16, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 3, 3, 3, 16, 1, 1, 1, 1, true)));
    QVERIFY(!conv2dUsesWinogradFilterGrad(makeConv2DGeom(1, 8, 8, 16, 3, 3, 8, 1, 1, 1, 1, true)));
}

void TestConv2D::throughput() {
    // Informational: a ResNet-ish 3x3 layer, forward and backward, 2 threads.
    ThreadPool pool(2);
    const Conv2DGeom g = makeConv2DGeom(8, 28, 28, 64, 3, 3, 64, 1, 1, 1, 1, true, 1);
    auto x = randomVector(size_t(g.n * g.h * g.w * g.c), 1), w = randomVector(size_t(9 * 64 * 64), 2);
    auto dy = randomVector(size_t(g.n * g.oh * g.ow * g.oc), 3);
    std::vector<float> y(dy.size()), dx(x.size()), dw(w.size()), db(64), ws(conv2dWorkspaceFloats(g));
    const double flops = 2.0 * g.n * g.oh * g.ow * g.oc * g.kh * g.kw * g.c;
    conv2dForward(g, x.data(), w.data(), nullptr, y.data(), ws.data(), pool);
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < 5; ++i) conv2dForward(g, x.data(), w.data(), nullptr, y.data(), ws.data(), pool);
    const double fwd = t.nsecsElapsed() * 1e-9 / 5;
    t.restart();
    for (int i = 0; i < 5; ++i)
        conv2dBackward(g, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), ws.data(), pool);
    const double bwd = t.nsecsElapsed() * 1e-9 / 5;
    qInfo("conv 8x28x28x64 3x3->64: forward %.2f ms (%.1f GFLOP/s), backward %.2f ms (%.1f GFLOP/s)",
          fwd * 1e3, flops / fwd * 1e-9, bwd * 1e3, 2 * flops / bwd * 1e-9);
    const Conv2DGeom d = makeConv2DGeom(8, 56, 56, 128, 3, 3, 128, 1, 1, 1, 1, true, 128);
    auto xd = randomVector(size_t(d.n * d.h * d.w * d.c), 4), wd = randomVector(size_t(9 * 128), 5);
    std::vector<float> yd(size_t(d.n * d.oh * d.ow * d.oc)), wsd(conv2dWorkspaceFloats(d));
    conv2dForward(d, xd.data(), wd.data(), nullptr, yd.data(), wsd.data(), pool);
    t.restart();
    for (int i = 0; i < 5; ++i) conv2dForward(d, xd.data(), wd.data(), nullptr, yd.data(), wsd.data(), pool);
    qInfo("depthwise 8x56x56x128 3x3: forward %.2f ms", t.nsecsElapsed() * 1e-6 / 5);
}

QTEST_APPLESS_MAIN(TestConv2D)
#include "tst_conv2d.moc"
