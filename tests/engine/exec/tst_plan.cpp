// SPDX-License-Identifier: Apache-2.0
// kiln-test-avx2
// Compiled plans: no heap allocation of any kind in training steps after the first (malloc and
// operator new are interposed here), liveness-based arena reuse, shared weights, frozen nodes and
// learning-rate multipliers, bit-identical training for a seed and any thread count, and frozen
// BatchNormalization in inference mode.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/allocator.h"
#include "engine/core/rng.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/optim/optimizer.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

// ---- Heap interposition --------------------------------------------------------------------------
// Every allocation function of the C library and every replaceable operator new is defined here,
// forwarding to glibc's internal allocator. While g_counting is set, each call is counted, from any
// thread (the pool's workers included); t_allocations counts the calling thread's share.
// glibc's own allocator entry points, which the counting functions below forward to.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}
// NOLINTEND(bugprone-reserved-identifier)

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
std::atomic<int64_t> g_frees{0};
std::atomic<size_t> g_firstSize{0};
thread_local int64_t t_allocations = 0;

inline void noteAllocation(size_t bytes) {
    if (!g_counting.load(std::memory_order_relaxed)) return;
    ++t_allocations;
    if (g_allocations.fetch_add(1, std::memory_order_relaxed) == 0) g_firstSize.store(bytes, std::memory_order_relaxed);
}
inline void noteFree(void* p) {
    if (p && g_counting.load(std::memory_order_relaxed)) g_frees.fetch_add(1, std::memory_order_relaxed);
}

struct Counts {
    int64_t allocations = 0;
    int64_t frees = 0;
    int64_t callerAllocations = 0;
    size_t firstSize = 0;
    uint64_t engineAllocations = 0;  // engine::allocStats().allocations over the window
};

// Counts heap traffic while it is alive.
class CountingScope {
public:
    CountingScope() : m_engineBefore(kiln::engine::allocStats().allocations) {
        g_allocations.store(0);
        g_frees.store(0);
        g_firstSize.store(0);
        t_allocations = 0;
        g_counting.store(true, std::memory_order_seq_cst);
    }
    Counts stop() {
        g_counting.store(false, std::memory_order_seq_cst);
        return {g_allocations.load(), g_frees.load(), t_allocations, g_firstSize.load(),
                kiln::engine::allocStats().allocations - m_engineBefore};
    }
    ~CountingScope() { g_counting.store(false); }

private:
    uint64_t m_engineBefore;
};
}  // namespace

// AddressSanitizer owns the C allocator (and replaces it before main): these counting
// replacements would run before it is initialised, so a sanitizer build leaves them out and skips
// the functions that count.
#ifndef __SANITIZE_ADDRESS__
extern "C" {
void* malloc(size_t n) noexcept {
    noteAllocation(n);
    return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) noexcept {
    noteAllocation(n * size);
    return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) noexcept {
    noteAllocation(n);
    return __libc_realloc(p, n);
}
void free(void* p) noexcept {
    noteFree(p);
    __libc_free(p);
}
void* aligned_alloc(size_t alignment, size_t n) noexcept {
    noteAllocation(n);
    return __libc_memalign(alignment, n);
}
void* memalign(size_t alignment, size_t n) noexcept {
    noteAllocation(n);
    return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) noexcept {
    noteAllocation(n);
    if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void* p = __libc_memalign(alignment, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void* valloc(size_t n) noexcept {
    noteAllocation(n);
    return __libc_memalign(4096, n);
}
void* pvalloc(size_t n) noexcept {
    noteAllocation(n);
    return __libc_memalign(4096, (n + 4095) / 4096 * 4096);
}
}

namespace {
void* newImpl(size_t n) {
    noteAllocation(n);
    void* p = __libc_malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
void* newAlignedImpl(size_t n, std::align_val_t a) {
    noteAllocation(n);
    size_t al = std::max(static_cast<size_t>(a), sizeof(void*));
    void* p = __libc_memalign(al, n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
void deleteImpl(void* p) noexcept {
    noteFree(p);
    __libc_free(p);
}
}  // namespace

void* operator new(std::size_t n) { return newImpl(n); }
void* operator new[](std::size_t n) { return newImpl(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try { return newImpl(n); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try { return newImpl(n); } catch (...) { return nullptr; }
}
void* operator new(std::size_t n, std::align_val_t a) { return newAlignedImpl(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return newAlignedImpl(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try { return newAlignedImpl(n, a); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try { return newAlignedImpl(n, a); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { deleteImpl(p); }
void operator delete[](void* p) noexcept { deleteImpl(p); }
void operator delete(void* p, std::size_t) noexcept { deleteImpl(p); }
void operator delete[](void* p, std::size_t) noexcept { deleteImpl(p); }
void operator delete(void* p, std::align_val_t) noexcept { deleteImpl(p); }
void operator delete[](void* p, std::align_val_t) noexcept { deleteImpl(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { deleteImpl(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { deleteImpl(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { deleteImpl(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { deleteImpl(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { deleteImpl(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { deleteImpl(p); }
#endif

// ---- Helpers -------------------------------------------------------------------------------------
using namespace kiln::engine;
using namespace kiln::engine::exec;
using nlohmann::json;

namespace {

// The model of a graph written as the "nodes" list of a project file.
ops::ModelInfo buildModel(const std::string& nodes, const std::string& outputs = "") {
    std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes;
    if (!outputs.empty()) text += R"(, "outputs": )" + outputs;
    text += "}}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

// A conv net with every op kind the allocation test must cover.
const char* kCnn = R"([
  {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 2]}},
  {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 4, "kernel_size": 3, "padding": "same"}},
  {"name": "bn", "op": "BatchNormalization", "inputs": ["conv"]},
  {"name": "relu", "op": "ReLU", "inputs": ["bn"]},
  {"name": "pool", "op": "MaxPooling2D", "inputs": ["relu"]},
  {"name": "drop", "op": "Dropout", "inputs": ["pool"], "attrs": {"rate": 0.25}},
  {"name": "flat", "op": "Flatten", "inputs": ["drop"]},
  {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}
])";

const char* kMlp = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [6]}},
  {"name": "h1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 16, "activation": "relu"}},
  {"name": "h2", "op": "Dense", "inputs": ["h1"], "attrs": {"units": 16, "activation": "gelu"}},
  {"name": "h3", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 8, "activation": "tanh"}},
  {"name": "logits", "op": "Dense", "inputs": ["h3"], "attrs": {"units": 3}}
])";

LossSpec sparseCe(const std::string& output, bool fromLogits = true) {
    LossSpec l;
    l.type = "SparseCategoricalCrossentropy";
    l.output = output;
    l.attrs.set("from_logits", fromLogits);
    l.targetShape = Shape{};
    return l;
}

LossSpec mse(const std::string& output, Shape target) {
    LossSpec l;
    l.type = "MeanSquaredError";
    l.output = output;
    l.targetShape = std::move(target);
    return l;
}

std::unique_ptr<Plan> compilePlan(const ops::ModelInfo& m, ParamStore& store, int64_t batch, bool training,
                                  std::vector<LossSpec> losses, ThreadPool& pool, uint64_t seed = 7) {
    CompileOptions o;
    o.batch = batch;
    o.training = training;
    o.losses = std::move(losses);
    o.seed = seed;
    auto p = Plan::compile(m, store, o, pool);
    if (!p.ok()) qFatal("Plan::compile: %s", p.error().toString().c_str());
    return std::move(p).value();
}

// Deterministic pseudo-random inputs.
void fillNormal(float* p, int64_t n, uint64_t stream, float scale = 1.0f) {
    for (int64_t i = 0; i < n; ++i) p[i] = scale * rng::normal(1234, stream, static_cast<uint64_t>(i));
}
void fillLabels(float* p, int64_t n, int classes) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % classes);
}

// Keeps the compiler from eliding an allocation whose result is otherwise unused.
void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

std::vector<float> values(const Parameter& p) { return {p.value.f32().begin(), p.value.f32().end()}; }
std::vector<float> grads(const Parameter& p) { return {p.grad.f32().begin(), p.grad.f32().end()}; }

bool sameBits(const ParamStore& a, const ParamStore& b) {
    if (a.params().size() != b.params().size()) return false;
    for (size_t k = 0; k < a.params().size(); ++k) {
        const Tensor& x = a.params()[k].value;
        const Tensor& y = b.params()[k].value;
        if (a.params()[k].name != b.params()[k].name || x.bytes() != y.bytes()) return false;
        if (std::memcmp(x.raw(), y.raw(), x.bytes()) != 0) return false;
    }
    return true;
}

double maxAbs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, static_cast<double>(std::abs(x)));
    return m;
}

// A classification data bundle: "features" of `sampleShape`, integer "label" in [0, classes).
train::DataBundle makeBundle(int64_t n, Shape sampleShape, int classes, uint64_t stream) {
    data::Column x;
    x.name = "features";
    x.sampleShape = sampleShape;
    x.values.resize(static_cast<size_t>(n * sampleShape.numel()));
    data::Column y;
    y.name = "label";
    y.sampleShape = Shape{};
    y.values.resize(static_cast<size_t>(n));
    const int64_t f = sampleShape.numel();
    for (int64_t i = 0; i < n; ++i) {
        const int c = static_cast<int>(i % classes);
        y.values[static_cast<size_t>(i)] = static_cast<float>(c);
        for (int64_t j = 0; j < f; ++j)
            x.values[static_cast<size_t>(i * f + j)] =
                rng::normal(99, stream, static_cast<uint64_t>(i * f + j)) + ((j % classes) == c ? 1.5f : 0.0f);
    }
    auto set = data::InMemoryDataset::create(n, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("InMemoryDataset::create: %s", set.error().toString().c_str());
    train::DataBundle b;
    b.train = std::move(set).value();
    return b;
}

train::TrainingConfig makeConfig(const std::string& trainingJson, const ops::ModelInfo& m) {
    auto c = train::parseTrainingConfig(json::parse(trainingJson), m.graph);
    if (!c.ok()) qFatal("parseTrainingConfig: %s", c.error().toString().c_str());
    return std::move(c).value();
}

std::unique_ptr<train::Trainer> makeTrainer(const ops::ModelInfo& m, const train::TrainingConfig& c,
                                            train::DataBundle data, ThreadPool& pool) {
    auto t = train::Trainer::create(m, c, std::move(data), pool);
    if (!t.ok()) qFatal("Trainer::create: %s", t.error().toString().c_str());
    return std::move(t).value();
}

}  // namespace

class TestPlan : public QObject {
    Q_OBJECT

private slots:
    void interpositionWorks() {
#ifdef __SANITIZE_ADDRESS__
        QSKIP("allocations are not counted under AddressSanitizer, which owns the C allocator");
#endif
        // The probe itself must see malloc, operator new, aligned allocations and engine buffers.
        CountingScope scope;
        void* a = std::malloc(10);
        escape(a);
        auto* b = new int(3);
        escape(b);
        void* c = std::aligned_alloc(64, 128);
        escape(c);
        void* d = alignedAlloc(100);
        auto v = std::make_unique<std::vector<double>>(100);
        escape(v->data());
        Counts n = scope.stop();
        std::free(a);
        delete b;
        std::free(c);
        alignedFree(d);
        QVERIFY2(n.allocations >= 6, qPrintable(QString::number(n.allocations)));
        QCOMPARE(n.engineAllocations, uint64_t{1});
        QVERIFY(n.callerAllocations >= 6);
    }

    // ---- No allocation after the first step ---------------------------------------------------
    void noAllocationInTrainingSteps_data() {
        QTest::addColumn<QString>("net");
        QTest::addColumn<int>("threads");
        QTest::newRow("cnn, 2 threads") << "cnn" << 2;
        QTest::newRow("cnn, 1 thread") << "cnn" << 1;
        QTest::newRow("mlp, 2 threads") << "mlp" << 2;
        QTest::newRow("mlp, 1 thread") << "mlp" << 1;
    }
    void noAllocationInTrainingSteps() {
#ifdef __SANITIZE_ADDRESS__
        QSKIP("allocations are not counted under AddressSanitizer, which owns the C allocator");
#endif
        QFETCH(QString, net);
        QFETCH(int, threads);
        const bool cnn = net == "cnn";
        const ops::ModelInfo m = buildModel(cnn ? kCnn : kMlp);
        ThreadPool pool(threads);
        ParamStore store = ParamStore::create(m, 5);
        const int64_t batch = 8;
        auto plan = compilePlan(m, store, batch, true, {sparseCe("logits")}, pool);
        fillNormal(plan->input(size_t{0}), batch * m.nodes[0].output.numelFrom(1), 1);
        fillLabels(plan->target(0), batch, 3);

        optim::OptimizerConfig oc;
        oc.type = "adam";
        oc.globalClipNorm = 5.0;  // the clipping reduction must not allocate either
        auto opt = optim::Optimizer::create(oc);
        QVERIFY(opt.ok());
        for (auto& p : store.params())
            if (p.trainable) opt->addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel(), p.lrMultiplier, p.decay);

        QVERIFY(plan->trainStep(0).ok());
        opt->step(1e-2, pool);
        const float firstLoss = plan->totalLoss();
        const std::vector<float> before = values(store.params()[0]);

        bool ok = true;
        CountingScope scope;
        for (uint64_t s = 1; s <= 4; ++s) {
            ok = plan->trainStep(s).ok() && ok;
            opt->step(1e-2, pool);
        }
        const Counts n = scope.stop();
        QVERIFY(ok);
        QVERIFY2(n.allocations == 0,
                 qPrintable(QString("%1 allocations (%2 on the calling thread; first of %3 bytes), %4 frees")
                                .arg(n.allocations).arg(n.callerAllocations).arg(n.firstSize).arg(n.frees)));
        QCOMPARE(n.frees, int64_t{0});
        QCOMPARE(n.engineAllocations, uint64_t{0});
        // The steps did real work.
        QVERIFY(std::isfinite(plan->totalLoss()));
        QVERIFY(plan->totalLoss() != firstLoss);
        QVERIFY(values(store.params()[0]) != before);
    }

    void noAllocationInInference() {
#ifdef __SANITIZE_ADDRESS__
        QSKIP("allocations are not counted under AddressSanitizer, which owns the C allocator");
#endif
        const ops::ModelInfo m = buildModel(kCnn);
        ThreadPool pool(2);
        ParamStore store = ParamStore::create(m, 5);
        auto plan = compilePlan(m, store, 4, false, {sparseCe("logits")}, pool);
        fillNormal(plan->input(size_t{0}), 4 * 8 * 8 * 2, 2);
        fillLabels(plan->target(0), 4, 3);
        QVERIFY(plan->forward().ok());
        bool ok = true;
        CountingScope scope;
        for (int s = 0; s < 3; ++s) ok = plan->forward().ok() && ok;
        const Counts n = scope.stop();
        QVERIFY(ok);
        QCOMPARE(n.allocations, int64_t{0});
        QCOMPARE(n.engineAllocations, uint64_t{0});
        QVERIFY(std::isfinite(plan->totalLoss()));
    }

    void noAllocationInTrainerStepOnce() {
#ifdef __SANITIZE_ADDRESS__
        QSKIP("allocations are not counted under AddressSanitizer, which owns the C allocator");
#endif
        // Trainer::stepOnce exists so that tests can check the trainer's own step path.
        const ops::ModelInfo m = buildModel(kMlp);
        ThreadPool pool(2);
        auto cfg = makeConfig(R"({"batch_size": 8, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})", m);
        auto trainer = makeTrainer(m, cfg, makeBundle(32, Shape{6}, 3, 1), pool);
        QVERIFY(trainer->stepOnce(0).ok());
        bool ok = true;
        CountingScope scope;
        for (int64_t s = 1; s <= 3; ++s) ok = trainer->stepOnce(s).ok() && ok;
        const Counts n = scope.stop();
        QVERIFY(ok);
        QVERIFY2(n.allocations == 0, qPrintable(QString("%1 allocations, first of %2 bytes").arg(n.allocations).arg(n.firstSize)));
        QCOMPARE(n.engineAllocations, uint64_t{0});
    }

    // ---- Liveness ------------------------------------------------------------------------------
    void livenessReusesArena() {
        // (Built with json: moc mis-reads raw strings that end in a quote.)
        json nodes = json::array();
        nodes.push_back({{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {64}}}}});
        std::string prev = "x";
        for (int i = 0; i < 12; ++i) {
            std::string name = std::to_string(i);
            name.insert(name.begin(), 'h');  // (not "h" + ...: GCC 12 warns falsely, -Wrestrict)
            nodes.push_back({{"name", name}, {"op", "Dense"}, {"inputs", {prev}},
                             {"attrs", {{"units", 64}, {"activation", "relu"}}}});
            prev = name;
        }
        nodes.push_back({{"name", "out"}, {"op", "Dense"}, {"inputs", {prev}}, {"attrs", {{"units", 10}}}});
        const ops::ModelInfo m = buildModel(nodes.dump());
        ThreadPool pool(1);
        ParamStore store = ParamStore::create(m, 1);
        auto trainPlan = compilePlan(m, store, 32, true, {sparseCe("out")}, pool);
        auto inferPlan = compilePlan(m, store, 32, false, {sparseCe("out")}, pool);
        auto predictPlan = compilePlan(m, store, 32, false, {}, pool);
        const PlanStats& t = trainPlan->stats();
        const PlanStats& f = inferPlan->stats();
        const PlanStats& p = predictPlan->stats();
        qInfo("training arena %zu of %zu unplanned; inference %zu of %zu; prediction %zu", t.arenaBytes,
              t.unplannedBytes, f.arenaBytes, f.unplannedBytes, p.arenaBytes);
        // Training keeps every activation for the backward pass (input, 12 hidden, the logits), so
        // that is the floor; reuse must fit the 13 gradients and the scratch into a few more.
        const size_t act = 32 * 64 * sizeof(float);
        const size_t kept = 13 * act + 32 * 10 * sizeof(float);
        QVERIFY(t.arenaBytes >= kept);
        QVERIFY2(t.arenaBytes <= kept + 4 * act, "training: gradient buffers are not reused");
        QVERIFY2(3 * t.arenaBytes < 2 * t.unplannedBytes, "training: expected well under one buffer per value");
        // Inference needs the input, the scratch and two activations at a time.
        QVERIFY2(f.arenaBytes <= 5 * act, "inference: activations are not reused");
        QVERIFY2(3 * f.arenaBytes < f.unplannedBytes, "inference: expected well under one buffer per value");
        QVERIFY(f.arenaBytes < t.arenaBytes);
        QVERIFY(p.arenaBytes <= f.arenaBytes);
        QVERIFY(f.unplannedBytes < t.unplannedBytes);
        // Steps: 13 forward + 1 loss; training adds 13 backward steps.
        QCOMPARE(f.steps, size_t{14});
        QCOMPARE(t.steps, size_t{27});
        // A 13-layer chain of 32x64 activations cannot fit in fewer than two live activations.
        QVERIFY(f.arenaBytes >= 2 * 32 * 64 * sizeof(float));
    }

    void livenessKeepsGradientsRight() {
        // Buffers share arena bytes; a central-difference check proves no value needed by the
        // backward pass was overwritten.
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [5]}},
          {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 7, "activation": "tanh"}},
          {"name": "b", "op": "Dense", "inputs": ["a"], "attrs": {"units": 7, "activation": "tanh"}},
          {"name": "c", "op": "Dense", "inputs": ["b"], "attrs": {"units": 7, "activation": "sigmoid"}},
          {"name": "skip", "op": "Add", "inputs": ["a", "c"]},
          {"name": "d", "op": "Dense", "inputs": ["skip"], "attrs": {"units": 6, "activation": "tanh"}},
          {"name": "out", "op": "Dense", "inputs": ["d"], "attrs": {"units": 3}}
        ])");
        ThreadPool pool(2);
        ParamStore store = ParamStore::create(m, 3);
        const int64_t batch = 4;
        auto train = compilePlan(m, store, batch, true, {mse("out", Shape{3})}, pool);
        auto eval = compilePlan(m, store, batch, false, {mse("out", Shape{3})}, pool);
        QVERIFY(train->stats().arenaBytes < train->stats().unplannedBytes);
        for (Plan* p : {train.get(), eval.get()}) {
            fillNormal(p->input(size_t{0}), batch * 5, 11);
            fillNormal(p->target(0), batch * 3, 12);
        }
        QVERIFY(train->trainStep(0).ok());
        auto lossAt = [&]() {
            if (!eval->forward().ok()) qFatal("forward failed");
            return static_cast<double>(eval->totalLoss());
        };
        QVERIFY(std::abs(lossAt() - train->totalLoss()) < 1e-5);
        int checked = 0;
        for (auto& p : store.params()) {
            float* w = p.value.data<float>();
            const float* g = p.grad.data<float>();
            for (int64_t k = 0; k < p.value.numel(); k += 5) {
                const float saved = w[k];
                const float h = 1e-2f;
                w[k] = saved + h;
                const double up = lossAt();
                w[k] = saved - h;
                const double down = lossAt();
                w[k] = saved;
                const double numeric = (up - down) / (2.0 * h);
                const double tol = 2e-3 + 2e-2 * std::abs(numeric);
                if (std::abs(numeric - g[k]) > tol)
                    QFAIL(qPrintable(QString("%1[%2]: analytic %3, numeric %4")
                                         .arg(QString::fromStdString(p.name)).arg(k).arg(g[k]).arg(numeric)));
                ++checked;
            }
        }
        QVERIFY(checked > 20);
    }

    // ---- Shared weights ------------------------------------------------------------------------
    void sharedWeightsSumGradients() {
        const char* tied = R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4, "activation": "tanh"}},
          {"name": "b", "op": "Dense", "inputs": ["a"], "attrs": {"units": 4, "activation": "tanh"}, "share_weights_with": "a"},
          {"name": "out", "op": "Dense", "inputs": ["b"], "attrs": {"units": 2}}
        ])";
        const char* untied = R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4, "activation": "tanh"}},
          {"name": "b", "op": "Dense", "inputs": ["a"], "attrs": {"units": 4, "activation": "tanh"}},
          {"name": "out", "op": "Dense", "inputs": ["b"], "attrs": {"units": 2}}
        ])";
        const ops::ModelInfo mt = buildModel(tied);
        const ops::ModelInfo mu = buildModel(untied);
        ThreadPool pool(2);
        ParamStore st = ParamStore::create(mt, 21);
        ParamStore su = ParamStore::create(mu, 21);
        // One parameter set for a and b.
        QCOMPARE(st.params().size(), size_t{4});  // a/kernel, a/bias, out/kernel, out/bias
        QVERIFY(st.find("a/kernel"));
        QVERIFY(!st.find("b/kernel"));
        QCOMPARE(st.index(2, 0), st.index(1, 0));
        QCOMPARE(mt.parameterCount(true), int64_t{4 * 4 + 4 + 4 * 2 + 2});
        QCOMPARE(mu.parameterCount(true), int64_t{2 * (4 * 4 + 4) + 4 * 2 + 2});
        // Untied copy: both a and b get the tied weights (a non-zero bias too).
        st.find("a/bias")->value.copyFrom(Tensor::fromVector(Shape{4}, {0.1f, -0.2f, 0.3f, 0.05f}));
        for (const char* n : {"a/", "b/"}) {
            su.find(std::string(n) + "kernel")->value.copyFrom(st.find("a/kernel")->value);
            su.find(std::string(n) + "bias")->value.copyFrom(st.find("a/bias")->value);
        }
        su.find("out/kernel")->value.copyFrom(st.find("out/kernel")->value);

        const int64_t batch = 5;
        auto pt = compilePlan(mt, st, batch, true, {mse("out", Shape{2})}, pool);
        auto pu = compilePlan(mu, su, batch, true, {mse("out", Shape{2})}, pool);
        for (Plan* p : {pt.get(), pu.get()}) {
            fillNormal(p->input(size_t{0}), batch * 4, 31);
            fillNormal(p->target(0), batch * 2, 32);
        }
        QVERIFY(pt->trainStep(0).ok());
        QVERIFY(pu->trainStep(0).ok());
        QCOMPARE(pt->totalLoss(), pu->totalLoss());
        for (const char* param : {"kernel", "bias"}) {
            const std::vector<float> gt = grads(*st.find(std::string("a/") + param));
            const std::vector<float> ga = grads(*su.find(std::string("a/") + param));
            const std::vector<float> gb = grads(*su.find(std::string("b/") + param));
            QVERIFY(maxAbs(ga) > 1e-4 && maxAbs(gb) > 1e-4);
            for (size_t k = 0; k < gt.size(); ++k) {
                const double want = static_cast<double>(ga[k]) + gb[k];
                if (std::abs(gt[k] - want) > 1e-6 + 1e-5 * std::abs(want))
                    QFAIL(qPrintable(QString("%1[%2]: tied %3, a+b %4").arg(param).arg(k).arg(gt[k]).arg(want)));
            }
        }
        const std::vector<float> ot = grads(*st.find("out/kernel"));
        const std::vector<float> ou = grads(*su.find("out/kernel"));
        for (size_t k = 0; k < ot.size(); ++k) QVERIFY(std::abs(ot[k] - ou[k]) <= 1e-6 + 1e-5 * std::abs(ou[k]));
        // A second step zeroes the gradients first: the same inputs give the same gradients.
        const std::vector<float> first = grads(*st.find("a/kernel"));
        QVERIFY(pt->trainStep(1).ok());
        QVERIFY(grads(*st.find("a/kernel")) == first);
    }

    // ---- Frozen nodes and learning-rate multipliers --------------------------------------------
    void frozenNodesGetNoGradient() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "d1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "activation": "relu"}, "trainable": false},
          {"name": "d2", "op": "Dense", "inputs": ["d1"], "attrs": {"units": 3}}
        ])");
        ThreadPool pool(2);
        ParamStore store = ParamStore::create(m, 2);
        QVERIFY(!store.find("d1/kernel")->trainable);
        QVERIFY(!store.find("d1/bias")->trainable);
        QVERIFY(store.find("d2/kernel")->trainable);
        QCOMPARE(m.parameterCount(false), int64_t{4 * 8 + 8});
        QCOMPARE(m.parameterCount(true), int64_t{8 * 3 + 3});
        auto plan = compilePlan(m, store, 6, true, {sparseCe("d2")}, pool);
        fillNormal(plan->input(size_t{0}), 6 * 4, 41);
        fillLabels(plan->target(0), 6, 3);
        QVERIFY(plan->trainStep(0).ok());
        QCOMPARE(maxAbs(grads(*store.find("d1/kernel"))), 0.0);
        QCOMPARE(maxAbs(grads(*store.find("d1/bias"))), 0.0);
        QVERIFY(maxAbs(grads(*store.find("d2/kernel"))) > 1e-5);
        // No backward step for the frozen first layer: nothing before it needs a gradient.
        const ops::ModelInfo all = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "d1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "activation": "relu"}},
          {"name": "d2", "op": "Dense", "inputs": ["d1"], "attrs": {"units": 3}}
        ])");
        ParamStore allStore = ParamStore::create(all, 2);
        const auto trainable = compilePlan(all, allStore, 6, true, {sparseCe("d2")}, pool);
        QCOMPARE(plan->stats().steps + 1, trainable->stats().steps);

        // Through the trainer: the frozen layer does not move, the other one does.
        auto cfg = makeConfig(R"({"batch_size": 8, "optimizer": {"type": "adamw", "learning_rate": 0.05},
                                  "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})", m);
        auto trainer = makeTrainer(m, cfg, makeBundle(32, Shape{4}, 3, 2), pool);
        const std::vector<float> k1 = values(*trainer->params().find("d1/kernel"));
        const std::vector<float> b1 = values(*trainer->params().find("d1/bias"));
        const std::vector<float> k2 = values(*trainer->params().find("d2/kernel"));
        for (int64_t s = 0; s < 3; ++s) QVERIFY(trainer->stepOnce(s).ok());
        QVERIFY(values(*trainer->params().find("d1/kernel")) == k1);
        QVERIFY(values(*trainer->params().find("d1/bias")) == b1);
        QVERIFY(values(*trainer->params().find("d2/kernel")) != k2);
    }

    void frozenMiddleLayerPassesGradient() {
        // A frozen layer between trainable ones gets no parameter gradient but passes one on.
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "d1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 5, "activation": "tanh"}},
          {"name": "mid", "op": "Dense", "inputs": ["d1"], "attrs": {"units": 5, "activation": "tanh"}, "trainable": false},
          {"name": "d2", "op": "Dense", "inputs": ["mid"], "attrs": {"units": 3}}
        ])");
        ThreadPool pool(1);
        ParamStore store = ParamStore::create(m, 8);
        auto plan = compilePlan(m, store, 4, true, {sparseCe("d2")}, pool);
        fillNormal(plan->input(size_t{0}), 16, 51);
        fillLabels(plan->target(0), 4, 3);
        QVERIFY(plan->trainStep(0).ok());
        QCOMPARE(maxAbs(grads(*store.find("mid/kernel"))), 0.0);
        QVERIFY(maxAbs(grads(*store.find("d1/kernel"))) > 1e-6);
        QVERIFY(maxAbs(grads(*store.find("d2/kernel"))) > 1e-6);
    }

    void lrMultiplierZeroFreezesNode() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "d1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "activation": "relu"}, "lr_multiplier": 0},
          {"name": "d2", "op": "Dense", "inputs": ["d1"], "attrs": {"units": 3}, "lr_multiplier": 2.0}
        ])");
        ThreadPool pool(2);
        // adamw: weight decay is scaled by the multiplier too.
        auto cfg = makeConfig(R"({"batch_size": 8, "optimizer": {"type": "adamw", "learning_rate": 0.05, "weight_decay": 0.1},
                                  "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})", m);
        auto trainer = makeTrainer(m, cfg, makeBundle(32, Shape{4}, 3, 3), pool);
        QVERIFY(trainer->params().find("d1/kernel")->trainable);
        QCOMPARE(trainer->params().find("d1/kernel")->lrMultiplier, 0.0f);
        QCOMPARE(trainer->params().find("d2/kernel")->lrMultiplier, 2.0f);
        const std::vector<float> k1 = values(*trainer->params().find("d1/kernel"));
        const std::vector<float> k2 = values(*trainer->params().find("d2/kernel"));
        for (int64_t s = 0; s < 3; ++s) QVERIFY(trainer->stepOnce(s).ok());
        // It still gets a gradient, it just does not move.
        QVERIFY(maxAbs(grads(*trainer->params().find("d1/kernel"))) > 1e-6);
        QVERIFY(values(*trainer->params().find("d1/kernel")) == k1);
        QVERIFY(values(*trainer->params().find("d2/kernel")) != k2);
    }

    // ---- Determinism ---------------------------------------------------------------------------
    void trainingIsBitIdentical_data() {
        QTest::addColumn<QString>("net");
        QTest::newRow("mlp") << "mlp";
        QTest::newRow("cnn") << "cnn";
        QTest::newRow("attention") << "attention";
    }
    void trainingIsBitIdentical() {
        QFETCH(QString, net);
        const bool cnn = net == "cnn", attention = net == "attention";
        const ops::ModelInfo m = buildModel(attention ? R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [6, 8]}},
          {"name": "mha", "op": "MultiHeadAttention", "inputs": ["x", "x"],
           "attrs": {"num_heads": 2, "key_dim": 4, "dropout": 0.2}},
          {"name": "add", "op": "Add", "inputs": ["x", "mha"]},
          {"name": "ln", "op": "LayerNormalization", "inputs": ["add"]},
          {"name": "ff", "op": "Dense", "inputs": ["ln"], "attrs": {"units": 8, "activation": "gelu"}},
          {"name": "flat", "op": "Flatten", "inputs": ["ff"]},
          {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}
        ])"
                                            : cnn     ? R"([
          {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 3]}},
          {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same"}},
          {"name": "bn", "op": "BatchNormalization", "inputs": ["conv"]},
          {"name": "relu", "op": "ReLU", "inputs": ["bn"]},
          {"name": "pool", "op": "MaxPooling2D", "inputs": ["relu"]},
          {"name": "flat", "op": "Flatten", "inputs": ["pool"]},
          {"name": "drop", "op": "Dropout", "inputs": ["flat"], "attrs": {"rate": 0.3}},
          {"name": "logits", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 3}}
        ])"
                                                      : R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [12]}},
          {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 96, "activation": "relu"}},
          {"name": "bn", "op": "BatchNormalization", "inputs": ["h"]},
          {"name": "drop", "op": "Dropout", "inputs": ["bn"], "attrs": {"rate": 0.3}},
          {"name": "h2", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 64, "activation": "gelu"}},
          {"name": "logits", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 3}}
        ])");
        const Shape sample = attention ? Shape{6, 8} : cnn ? Shape{8, 8, 3}
                                                           : Shape{12};
        auto run = [&](uint64_t seed, int threads, std::vector<double>* losses) {
            ThreadPool pool(threads);
            const std::string training = R"({"epochs": 2, "batch_size": 24, "seed": )" + std::to_string(seed) +
                                         R"(, "optimizer": {"type": "adam", "learning_rate": 0.01, "global_clipnorm": 1.0},
                                            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true},
                                            "metrics": ["accuracy"]})";
            auto cfg = makeConfig(training, m);
            // 100 samples: the last batch of each epoch is partial.
            auto trainer = makeTrainer(m, cfg, makeBundle(100, sample, 3, 4), pool);
            auto fit = trainer->fit();
            if (!fit.ok()) qFatal("fit: %s", fit.error().toString().c_str());
            if (losses)
                for (const auto& e : fit->history) losses->push_back(e.train.loss);
            // Copy the weights out (the trainer and its store die here).
            ParamStore copy = ParamStore::create(m, 0);
            for (size_t k = 0; k < copy.params().size(); ++k) copy.params()[k].value.copyFrom(trainer->params().params()[k].value);
            return copy;
        };
        std::vector<double> l1, l2, l3;
        const ParamStore a = run(17, 2, &l1);
        const ParamStore b = run(17, 2, &l2);
        QVERIFY2(sameBits(a, b), "the same seed must give bit-identical weights");
        QVERIFY(l1 == l2);
        QCOMPARE(l1.size(), size_t{2});
        const ParamStore c = run(17, 1, &l3);
        QVERIFY2(sameBits(a, c), "1 and 2 threads must give bit-identical weights");
        QVERIFY(l1 == l3);
        const ParamStore d = run(17, 3, nullptr);
        QVERIFY2(sameBits(a, d), "3 threads must give bit-identical weights");
        const ParamStore e = run(18, 2, nullptr);
        QVERIFY2(!sameBits(a, e), "another seed must give other weights");
        // The weights moved away from their initial values.
        const ParamStore init = ParamStore::create(m, 17);
        QVERIFY(!sameBits(a, init));
    }

    // ---- ReLU folding and first-write overwrites ------------------------------------------------
    void fusedPlanMatchesUnfused_data() {
        QTest::addColumn<bool>("frozenBn");
        QTest::newRow("training batch norm") << false;
        QTest::newRow("frozen batch norm") << true;
    }
    void fusedPlanMatchesUnfused() {
        // Residual blocks with every case of the folding rules: a ReLU after a batch norm and after
        // an Add (folded), after a batch norm that has another reader or is a model output (kept
        // apart), Add(x, x) (zeroed, not overwritten), a strided 1x1 convolution (input pixels no
        // tap reaches get zeros when overwritten), and a batch norm on a Dense output. Adds folded
        // into a batch norm: add1 (then r2 too), the sum of two batch norms (the later one takes
        // it), and BatchNorm(x) + x (one gradient buffer written twice by the same step).
        QFETCH(bool, frozenBn);
        const std::string fz = frozenBn ? R"(, "trainable": false)" : "";
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [8, 8, 3]}},
          {"name": "c1", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 4, "kernel_size": 3, "padding": "same", "use_bias": false}},
          {"name": "b1", "op": "BatchNormalization", "inputs": ["c1"])" + fz + R"(},
          {"name": "r1", "op": "ReLU", "inputs": ["b1"]},
          {"name": "c2", "op": "Conv2D", "inputs": ["r1"], "attrs": {"filters": 4, "kernel_size": 3, "padding": "same"}},
          {"name": "b2", "op": "BatchNormalization", "inputs": ["c2"]},
          {"name": "add1", "op": "Add", "inputs": ["b2", "r1"]},
          {"name": "r2", "op": "ReLU", "inputs": ["add1"]},
          {"name": "c3", "op": "Conv2D", "inputs": ["r2"], "attrs": {"filters": 8, "kernel_size": 3, "strides": 2, "padding": "same"}},
          {"name": "b3", "op": "BatchNormalization", "inputs": ["c3"]},
          {"name": "r3", "op": "ReLU", "inputs": ["b3"]},
          {"name": "both", "op": "Add", "inputs": ["r3", "b3"]},
          {"name": "side", "op": "Conv2D", "inputs": ["r2"], "attrs": {"filters": 8, "kernel_size": 1, "strides": 2}},
          {"name": "b4", "op": "BatchNormalization", "inputs": ["side"]},
          {"name": "r4", "op": "ReLU", "inputs": ["b4"]},
          {"name": "twice", "op": "Add", "inputs": ["r4", "r4"]},
          {"name": "sum", "op": "Add", "inputs": ["both", "twice"]},
          {"name": "r5", "op": "ReLU", "inputs": ["sum"]},
          {"name": "e1", "op": "Conv2D", "inputs": ["r5"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same"}},
          {"name": "be1", "op": "BatchNormalization", "inputs": ["e1"]},
          {"name": "e2", "op": "Conv2D", "inputs": ["r5"], "attrs": {"filters": 8, "kernel_size": 1}},
          {"name": "be2", "op": "BatchNormalization", "inputs": ["e2"]},
          {"name": "pair", "op": "Add", "inputs": ["be1", "be2"]},
          {"name": "e3", "op": "Conv2D", "inputs": ["pair"], "attrs": {"filters": 8, "kernel_size": 1}},
          {"name": "self", "op": "BatchNormalization", "inputs": ["e3"])" + fz + R"(},
          {"name": "own", "op": "Add", "inputs": ["self", "e3"]},
          {"name": "r7", "op": "ReLU", "inputs": ["own"]},
          {"name": "gap", "op": "GlobalAveragePooling2D", "inputs": ["r7"]},
          {"name": "d", "op": "Dense", "inputs": ["gap"], "attrs": {"units": 6}},
          {"name": "b5", "op": "BatchNormalization", "inputs": ["d"]},
          {"name": "r6", "op": "ReLU", "inputs": ["b5"]},
          {"name": "logits", "op": "Dense", "inputs": ["r6"], "attrs": {"units": 3}}
        ])", R"(["logits", "b4"])");
        const int64_t batch = 6;
        ThreadPool pool(2);
        auto compile = [&](ParamStore& store, bool training, bool fuse) {
            CompileOptions o;
            o.batch = batch;
            o.training = training;
            o.losses = {sparseCe("logits")};
            o.seed = 7;
            o.fuse = fuse;
            auto p = Plan::compile(m, store, o, pool);
            if (!p.ok()) qFatal("Plan::compile: %s", p.error().toString().c_str());
            return std::move(p).value();
        };
        ParamStore fusedStore = ParamStore::create(m, 5), plainStore = ParamStore::create(m, 5);
        auto fused = compile(fusedStore, true, true);
        auto plain = compile(plainStore, true, false);
        // r1, r2, r5, r6 and r7 fold, and so do add1, pair and own (8 forward and 8 backward
        // steps fewer); r3, r4, both, twice and sum do not.
        QCOMPARE(fused->stats().steps + 16, plain->stats().steps);
        for (int step = 0; step < 3; ++step) {
            for (Plan* p : {fused.get(), plain.get()}) {
                fillNormal(p->input(size_t{0}), batch * 8 * 8 * 3, 40 + static_cast<uint64_t>(step));
                fillLabels(p->target(0), batch, 3);
            }
            QVERIFY(fused->trainStep(static_cast<uint64_t>(step)).ok());
            QVERIFY(plain->trainStep(static_cast<uint64_t>(step)).ok());
            QCOMPARE(fused->totalLoss(), plain->totalLoss());
            for (size_t k = 0; k < fusedStore.params().size(); ++k) {
                const auto& a = fusedStore.params()[k];
                const auto& b = plainStore.params()[k];
                if (a.trainable && grads(a) != grads(b))
                    QFAIL(qPrintable(QString("step %1: gradient of %2 differs").arg(step).arg(QString::fromStdString(a.name))));
                // Plain SGD on the gradients keeps the two stores in step.
                float* wa = fusedStore.params()[k].value.data<float>();
                float* wb = plainStore.params()[k].value.data<float>();
                const float* ga = a.grad.data<float>();
                for (int64_t i = 0; a.trainable && i < a.value.numel(); ++i) {
                    wa[i] -= 0.1f * ga[i];
                    wb[i] -= 0.1f * ga[i];
                }
            }
            QVERIFY(sameBits(fusedStore, plainStore));
        }
        // Inference (moving statistics): the same outputs, the batch norm output included, up to
        // rounding: an inference plan also folds each batch norm after a convolution into the
        // convolution's weights.
        auto fusedEval = compile(fusedStore, false, true);
        auto plainEval = compile(plainStore, false, false);
        QVERIFY(fusedEval->stats().steps < plainEval->stats().steps);
        for (Plan* p : {fusedEval.get(), plainEval.get()}) {
            fillNormal(p->input(size_t{0}), batch * 8 * 8 * 3, 50);
            QVERIFY(p->forward().ok());
        }
        for (size_t o = 0; o < 2; ++o) {
            const int64_t count = fusedEval->outputShape(o).numel();
            for (int64_t i = 0; i < count; ++i) {
                const float a = fusedEval->output(o)[i], b = plainEval->output(o)[i];
                if (!(std::abs(a - b) <= 1e-5f * (1.0f + std::abs(b))))
                    QFAIL(qPrintable(QString("output %1 element %2: %3 vs %4").arg(o).arg(i).arg(a).arg(b)));
            }
        }
    }

    // Inference plans fold a batch norm into the convolution before it (with bias, groups, a
    // following ReLU, as a model output); a convolution with its own activation keeps its batch
    // norm. Outputs equal the unfolded plan's up to rounding.
    void batchNormFoldedIntoConvolutionForInference() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [7, 6, 4]}},
          {"name": "c1", "op": "Conv2D", "inputs": ["x"], "attrs": {"filters": 6, "kernel_size": 3, "padding": "same", "groups": 2}},
          {"name": "b1", "op": "BatchNormalization", "inputs": ["c1"], "attrs": {"epsilon": 0.01}},
          {"name": "r1", "op": "ReLU", "inputs": ["b1"]},
          {"name": "c2", "op": "Conv2D", "inputs": ["r1"], "attrs": {"filters": 5, "kernel_size": 3, "strides": 2, "padding": "same", "use_bias": false}},
          {"name": "b2", "op": "BatchNormalization", "inputs": ["c2"]},
          {"name": "c3", "op": "Conv2D", "inputs": ["b2"], "attrs": {"filters": 4, "kernel_size": 1, "activation": "relu"}},
          {"name": "b3", "op": "BatchNormalization", "inputs": ["c3"]},
          {"name": "gap", "op": "GlobalAveragePooling2D", "inputs": ["b3"]}
        ])", R"(["gap", "b2"])");
        ThreadPool pool(2);
        ParamStore store = ParamStore::create(m, 3);
        // Batch-norm parameters and moving statistics away from their initial values.
        uint64_t seed = 90;
        for (auto& p : store.params()) {
            const bool variance = p.name.find("moving_variance") != std::string::npos;
            float* v = p.value.data<float>();
            fillNormal(v, p.value.numel(), seed++);
            if (variance)
                for (int64_t i = 0; i < p.value.numel(); ++i) v[i] = 0.2f + std::abs(v[i]);
        }
        auto compile = [&](bool fuse) {
            CompileOptions o;
            o.batch = 3;
            o.training = false;
            o.fuse = fuse;
            auto p = Plan::compile(m, store, o, pool);
            if (!p.ok()) qFatal("Plan::compile: %s", p.error().toString().c_str());
            return std::move(p).value();
        };
        auto fused = compile(true), plain = compile(false);
        // b1 (with r1) and b2 fold; b3 follows a convolution with its own ReLU and stays.
        QCOMPARE(fused->stats().steps + 3, plain->stats().steps);
        for (Plan* p : {fused.get(), plain.get()}) {
            fillNormal(p->input(size_t{0}), 3 * 7 * 6 * 4, 7);
            QVERIFY(p->forward().ok());
        }
        for (size_t o = 0; o < 2; ++o) {
            const int64_t count = fused->outputShape(o).numel();
            for (int64_t i = 0; i < count; ++i) {
                const float a = fused->output(o)[i], b = plain->output(o)[i];
                if (!(std::abs(a - b) <= 1e-5f * (1.0f + std::abs(b))))
                    QFAIL(qPrintable(QString("output %1 element %2: %3 vs %4").arg(o).arg(i).arg(a).arg(b)));
            }
        }
    }

    // ---- Frozen BatchNormalization --------------------------------------------------------------
    void frozenBatchNormUsesMovingStatistics() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "d", "op": "Dense", "inputs": ["x"], "attrs": {"units": 3}},
          {"name": "bn", "op": "BatchNormalization", "inputs": ["d"], "trainable": false, "attrs": {"epsilon": 0.001}}
        ])");
        ThreadPool pool(2);
        ParamStore store = ParamStore::create(m, 6);
        const std::vector<float> mm{0.3f, -0.2f, 0.1f}, mv{2.0f, 0.5f, 1.5f}, gamma{1.5f, 0.7f, -1.0f},
            beta{0.1f, 0.2f, 0.3f};
        store.find("bn/moving_mean")->value.copyFrom(Tensor::fromVector(Shape{3}, mm));
        store.find("bn/moving_variance")->value.copyFrom(Tensor::fromVector(Shape{3}, mv));
        store.find("bn/gamma")->value.copyFrom(Tensor::fromVector(Shape{3}, gamma));
        store.find("bn/beta")->value.copyFrom(Tensor::fromVector(Shape{3}, beta));
        store.find("d/bias")->value.copyFrom(Tensor::fromVector(Shape{3}, {0.5f, -0.5f, 0.25f}));
        QVERIFY(!store.find("bn/gamma")->trainable);
        QVERIFY(!store.find("bn/beta")->trainable);

        const int64_t batch = 6;
        auto plan = compilePlan(m, store, batch, true, {mse("bn", Shape{3})}, pool);
        float* x = plan->input(size_t{0});
        float* t = plan->target(0);
        fillNormal(x, batch * 4, 61, 2.0f);
        fillNormal(t, batch * 3, 62);
        QVERIFY(plan->trainStep(0).ok());

        // The output is the inference-mode normalisation of d's output.
        const float* w = store.find("d/kernel")->value.data<float>();
        const float* bias = store.find("d/bias")->value.data<float>();
        const float* out = plan->output(0);
        std::vector<double> z(static_cast<size_t>(batch * 3)), dz(z.size());
        for (int64_t i = 0; i < batch; ++i)
            for (int c = 0; c < 3; ++c) {
                double y = bias[c];
                for (int k = 0; k < 4; ++k) y += static_cast<double>(x[i * 4 + k]) * w[k * 3 + c];
                const double zz = gamma[static_cast<size_t>(c)] * (y - mm[static_cast<size_t>(c)]) /
                                      std::sqrt(mv[static_cast<size_t>(c)] + 0.001) + beta[static_cast<size_t>(c)];
                z[static_cast<size_t>(i * 3 + c)] = zz;
                QVERIFY2(std::abs(out[i * 3 + c] - zz) < 1e-4 * (1 + std::abs(zz)),
                         qPrintable(QString("out[%1,%2] = %3, inference mode gives %4").arg(i).arg(c).arg(out[i * 3 + c]).arg(zz)));
                dz[static_cast<size_t>(i * 3 + c)] = 2.0 * (zz - t[i * 3 + c]) / static_cast<double>(batch * 3);
            }
        // Moving statistics and the frozen gamma/beta are untouched; the frozen node has no gradient.
        QVERIFY(values(*store.find("bn/moving_mean")) == mm);
        QVERIFY(values(*store.find("bn/moving_variance")) == mv);
        QCOMPARE(maxAbs(grads(*store.find("bn/gamma"))), 0.0);
        QCOMPARE(maxAbs(grads(*store.find("bn/beta"))), 0.0);
        // The gradient reaching d is the inference-mode one: dy = dz * gamma / sqrt(var + eps).
        const float* gw = store.find("d/kernel")->grad.data<float>();
        const float* gb = store.find("d/bias")->grad.data<float>();
        for (int c = 0; c < 3; ++c) {
            const double scale = gamma[static_cast<size_t>(c)] / std::sqrt(mv[static_cast<size_t>(c)] + 0.001);
            double wantBias = 0;
            for (int64_t i = 0; i < batch; ++i) wantBias += dz[static_cast<size_t>(i * 3 + c)] * scale;
            QVERIFY2(std::abs(gb[c] - wantBias) < 1e-5 + 1e-4 * std::abs(wantBias),
                     qPrintable(QString("d/bias grad[%1] = %2, expected %3").arg(c).arg(gb[c]).arg(wantBias)));
            for (int k = 0; k < 4; ++k) {
                double want = 0;
                for (int64_t i = 0; i < batch; ++i) want += static_cast<double>(x[i * 4 + k]) * dz[static_cast<size_t>(i * 3 + c)] * scale;
                QVERIFY2(std::abs(gw[k * 3 + c] - want) < 1e-5 + 1e-4 * std::abs(want),
                         qPrintable(QString("d/kernel grad[%1,%2] = %3, expected %4").arg(k).arg(c).arg(gw[k * 3 + c]).arg(want)));
            }
        }

        // Through the trainer, over several steps: the statistics and gamma/beta stay put.
        auto cfg = makeConfig(R"({"batch_size": 8, "epochs": 1, "optimizer": {"type": "sgd", "learning_rate": 0.1},
                                  "loss": "MeanSquaredError"})", m);
        train::DataBundle bundle;
        {
            data::Column xc{"features", Shape{4}, {}, {}, {}};
            data::Column yc{"label", Shape{3}, {}, {}, {}};
            for (int i = 0; i < 32 * 4; ++i) xc.values.push_back(rng::normal(5, 1, static_cast<uint64_t>(i)));
            for (int i = 0; i < 32 * 3; ++i) yc.values.push_back(rng::normal(5, 2, static_cast<uint64_t>(i)));
            auto set = data::InMemoryDataset::create(32, {xc, yc});
            QVERIFY(set.ok());
            bundle.train = std::move(set).value();
        }
        auto trainer = makeTrainer(m, cfg, std::move(bundle), pool);
        auto& tp = trainer->params();
        tp.find("bn/moving_mean")->value.copyFrom(Tensor::fromVector(Shape{3}, mm));
        tp.find("bn/moving_variance")->value.copyFrom(Tensor::fromVector(Shape{3}, mv));
        const std::vector<float> g0 = values(*tp.find("bn/gamma"));
        const std::vector<float> k0 = values(*tp.find("d/kernel"));
        QVERIFY(trainer->stepOnce(0).ok());
        QVERIFY(trainer->fit().ok());
        QVERIFY(values(*tp.find("bn/moving_mean")) == mm);
        QVERIFY(values(*tp.find("bn/moving_variance")) == mv);
        QVERIFY(values(*tp.find("bn/gamma")) == g0);
        QVERIFY(values(*tp.find("d/kernel")) != k0);
    }

    void trainableBatchNormUpdatesMovingStatistics() {
        // The contrast: a trainable BatchNormalization does update its statistics in training.
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "d", "op": "Dense", "inputs": ["x"], "attrs": {"units": 3}},
          {"name": "bn", "op": "BatchNormalization", "inputs": ["d"]}
        ])");
        ThreadPool pool(1);
        ParamStore store = ParamStore::create(m, 6);
        auto plan = compilePlan(m, store, 6, true, {mse("bn", Shape{3})}, pool);
        fillNormal(plan->input(size_t{0}), 24, 61, 2.0f);
        fillNormal(plan->target(0), 18, 62);
        const std::vector<float> mm = values(*store.find("bn/moving_mean"));
        const std::vector<float> mv = values(*store.find("bn/moving_variance"));
        QVERIFY(plan->trainStep(0).ok());
        QVERIFY(values(*store.find("bn/moving_mean")) != mm);
        QVERIFY(values(*store.find("bn/moving_variance")) != mv);
        QVERIFY(maxAbs(grads(*store.find("bn/gamma"))) > 0);
        // ...but not in an inference plan.
        auto infer = compilePlan(m, store, 6, false, {}, pool);
        fillNormal(infer->input(size_t{0}), 24, 61, 2.0f);
        const std::vector<float> mm2 = values(*store.find("bn/moving_mean"));
        QVERIFY(infer->forward().ok());
        QVERIFY(values(*store.find("bn/moving_mean")) == mm2);
    }
};

QTEST_APPLESS_MAIN(TestPlan)
#include "tst_plan.moc"
