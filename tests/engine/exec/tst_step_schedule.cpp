// SPDX-License-Identifier: Apache-2.0
// exec::Schedule, the device-independent step list both plans are built from: step order, alias
// roots, gradient needs, buffer liveness, the first write of every gradient buffer, and that the
// CPU plan's arena is the schedule's placement. Device traits (no saved buffer for a CPU-placed
// node, no workspace in the arena) change only what they describe.
#include <QtTest>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/allocator.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/exec/schedule.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using namespace kiln::engine::exec;

namespace {

ops::ModelInfo buildModel(const std::string& nodes, const std::string& outputs = "") {
    std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes;
    if (!outputs.empty()) text += R"(, "outputs": )" + outputs;
    text += "}}";
    auto p = io::parseProject(text, "schedule.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

// A skip connection (h feeds both d2 and the Add) behind a Flatten alias, and a frozen node.
const char* kSkip = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [4, 2]}},
  {"name": "flat", "op": "Flatten", "inputs": ["x"]},
  {"name": "h", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 6}},
  {"name": "d2", "op": "Dense", "inputs": ["h"], "attrs": {"units": 6}},
  {"name": "sum", "op": "Add", "inputs": ["h", "d2"]},
  {"name": "frozen", "op": "Dense", "inputs": ["sum"], "attrs": {"units": 6}, "trainable": false},
  {"name": "logits", "op": "Dense", "inputs": ["frozen"], "attrs": {"units": 3}}
])";

int nodeIndex(const ops::ModelInfo& m, const char* name) {
    return m.graph.find(name);
}

std::vector<LossSpec> sparseLoss() {
    LossSpec l;
    l.type = "SparseCategoricalCrossentropy";
    l.output = "logits";
    l.attrs.set("from_logits", true);
    l.targetShape = Shape{};
    return {l};
}

// The CPU kernels' traits, as exec::Plan reports them, and their largest scratch need (losses
// included) in bytes.
std::vector<KernelTraits> cpuTraits(const ops::ModelInfo& m, int64_t batch, size_t* workspace = nullptr) {
    std::vector<KernelTraits> traits(m.nodes.size());
    size_t floats = 0;
    auto losses = resolveLosses(m, sparseLoss(), batch);
    if (!losses.ok()) qFatal("resolveLosses: %s", losses.error().toString().c_str());
    for (const auto& l : *losses) {
        auto k = l.def->cpu(l.context(), Shape{1});
        if (!k.ok()) qFatal("loss kernel: %s", k.error().toString().c_str());
        floats = std::max(floats, (*k)->workspaceFloats());
    }
    for (int i : m.order) {
        const auto& ni = m.nodes[static_cast<size_t>(i)];
        std::vector<Shape> ins;
        for (const auto& s : ni.inputShapes) ins.push_back(s.withBatch(batch));
        const ops::ShapeContext ctx{m.graph.nodes[static_cast<size_t>(i)], ni.attrs, ins};
        auto k = ni.def->cpu(ctx, ni.output.withBatch(batch));
        if (!k.ok()) qFatal("cpu kernel: %s", k.error().toString().c_str());
        traits[static_cast<size_t>(i)] = {(*k)->aliasesInput(), (*k)->savedFloats() * sizeof(float),
                                          (*k)->backwardNeedsInputs(), (*k)->backwardNeedsOutput(),
                                          (*k)->overwritesInputGrads()};
        floats = std::max(floats, (*k)->workspaceFloats());
    }
    if (workspace) *workspace = floats * sizeof(float);
    return traits;
}

Schedule schedule(const ops::ModelInfo& m, const ParamStore& ps, int64_t batch, bool training,
                  std::optional<size_t> workspace = std::nullopt) {
    auto losses = resolveLosses(m, sparseLoss(), batch);
    if (!losses.ok()) qFatal("resolveLosses: %s", losses.error().toString().c_str());
    ScheduleOptions o;
    o.batch = batch;
    o.training = training;
    o.workspaceBytes = workspace;
    return Schedule::build(m, ps, cpuTraits(m, batch), std::move(losses).value(), o);
}

}  // namespace

class TestStepSchedule : public QObject {
    Q_OBJECT

private slots:
    void stepsAliasesAndGradientNeeds() {
        const auto m = buildModel(kSkip);
        const auto ps = ParamStore::create(m, 1);
        const Schedule s = schedule(m, ps, 8, true);
        const int x = nodeIndex(m, "x"), flat = nodeIndex(m, "flat"), h = nodeIndex(m, "h"),
                  d2 = nodeIndex(m, "d2"), sum = nodeIndex(m, "sum"), frozen = nodeIndex(m, "frozen"),
                  logits = nodeIndex(m, "logits");
        // Flatten aliases the Input: same root, same value buffer, no step.
        QCOMPARE(s.root[static_cast<size_t>(flat)], x);
        QCOMPARE(s.value[static_cast<size_t>(flat)], s.value[static_cast<size_t>(x)]);
        // Forward: every node but the Input and the alias, in model order; one loss step;
        // backward in reverse order. No gradient reaches the Input (nothing trainable above
        // it), so it has no backward step beyond h's.
        QCOMPARE(s.forwardSteps, size_t{5});
        QCOMPARE(s.lossSteps, size_t{1});
        std::vector<int> forward, backward;
        for (const auto& st : s.steps) {
            if (st.kind == StepKind::Forward) forward.push_back(st.node);
            if (st.kind == StepKind::Backward) backward.push_back(st.node);
        }
        QCOMPARE(forward, (std::vector<int>{h, d2, sum, frozen, logits}));
        QCOMPARE(backward, (std::vector<int>{logits, frozen, sum, d2, h}));
        QCOMPARE(s.steps[s.forwardSteps].kind, StepKind::Loss);
        QCOMPARE(s.steps[s.forwardSteps].node, logits);
        // The frozen node passes the gradient on but owns nothing trainable.
        QVERIFY(!s.needs.hasTrainable[static_cast<size_t>(frozen)]);
        QVERIFY(s.needs.needGrad[static_cast<size_t>(frozen)]);
        QVERIFY(!s.needs.needGrad[static_cast<size_t>(x)]);
        QCOMPARE(s.gradient[static_cast<size_t>(x)], -1);
        // Positions follow the StepTimeline: forward 0..F-1, loss F, backward after.
        const StepTimeline t(m, 1);
        for (const auto& st : s.steps) {
            if (st.kind == StepKind::Forward) QCOMPARE(st.position, t.forward(st.node));
            if (st.kind == StepKind::Loss) QCOMPARE(st.position, t.loss(st.loss));
            if (st.kind == StepKind::Backward) QCOMPARE(st.position, t.backward(st.node));
        }
    }

    void firstWriteIsTheEarliestAccumulatingStep() {
        const auto m = buildModel(kSkip);
        const auto ps = ParamStore::create(m, 1);
        const Schedule s = schedule(m, ps, 8, true);
        QCOMPARE(s.firstWrite.size(), s.buffers.size());
        // Every gradient buffer that a step writes has exactly one first writer, which is the
        // earliest loss or backward step naming it in dIn, and that step either lists it in
        // zeroFirst or overwrites it (never both).
        std::vector<int> zeroedAt(s.buffers.size(), -1);
        for (size_t k = 0; k < s.steps.size(); ++k) {
            const ScheduleStep& st = s.steps[k];
            QCOMPARE(st.overwrite.size(), st.dIn.size());
            for (int b : st.zeroFirst) {
                QCOMPARE(zeroedAt[static_cast<size_t>(b)], -1);
                zeroedAt[static_cast<size_t>(b)] = static_cast<int>(k);
            }
            for (size_t j = 0; j < st.dIn.size(); ++j) {
                if (!st.overwrite[j]) continue;
                const int b = st.dIn[j];
                QVERIFY(b >= 0);
                QVERIFY(std::find(st.zeroFirst.begin(), st.zeroFirst.end(), b) == st.zeroFirst.end());
                QCOMPARE(zeroedAt[static_cast<size_t>(b)], -1);
                zeroedAt[static_cast<size_t>(b)] = static_cast<int>(k);
            }
        }
        for (size_t b = 0; b < s.buffers.size(); ++b) {
            int earliest = -1;
            for (size_t k = 0; k < s.steps.size() && earliest < 0; ++k)
                for (int d : s.steps[k].dIn)
                    if (d == static_cast<int>(b)) earliest = static_cast<int>(k);
            QCOMPARE(s.firstWrite[b], earliest);
            QCOMPARE(zeroedAt[b], earliest);
            if (earliest >= 0) {
                QCOMPARE(s.kinds[b], BufferKind::Gradient);
                QVERIFY(s.steps[static_cast<size_t>(earliest)].kind != StepKind::Forward);
            }
        }
        // h fans out to d2 and the Add: its gradient is first written by the Add's backward step
        // (the later node runs first backward), then accumulated by d2's.
        const int h = nodeIndex(m, "h"), sum = nodeIndex(m, "sum"), d2 = nodeIndex(m, "d2");
        const int gh = s.gradient[static_cast<size_t>(h)];
        QVERIFY(gh >= 0);
        const ScheduleStep& first = s.steps[static_cast<size_t>(s.firstWrite[static_cast<size_t>(gh)])];
        QCOMPARE(first.kind, StepKind::Backward);
        QCOMPARE(first.node, sum);
        // The Add's kernel overwrites it; the loss kernel does not overwrite, so the output's
        // gradient is zeroed.
        QCOMPARE(first.overwrite[0], uint8_t{1});
        QVERIFY(first.zeroFirst.empty());
        bool laterWrite = false;
        for (const auto& st : s.steps)
            if (st.kind == StepKind::Backward && st.node == d2)
                laterWrite = std::find(st.dIn.begin(), st.dIn.end(), gh) != st.dIn.end();
        QVERIFY(laterWrite);
        // The loss writes the output's gradient first.
        const int gl = s.gradient[static_cast<size_t>(nodeIndex(m, "logits"))];
        QCOMPARE(s.firstWrite[static_cast<size_t>(gl)], static_cast<int>(s.forwardSteps));
        QCOMPARE(s.steps[s.forwardSteps].zeroFirst, std::vector<int>{gl});
    }

    void sameBufferTwiceIsZeroedNotOverwritten() {
        // Add(h, h): both gradients land in one buffer, so the first writer must zero it and add
        // twice rather than overwrite it with one term.
        const auto m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4}},
          {"name": "twice", "op": "Add", "inputs": ["h", "h"]},
          {"name": "logits", "op": "Dense", "inputs": ["twice"], "attrs": {"units": 3}}
        ])");
        const auto ps = ParamStore::create(m, 1);
        const Schedule s = schedule(m, ps, 4, true);
        const int gh = s.gradient[static_cast<size_t>(nodeIndex(m, "h"))];
        const ScheduleStep& add = s.steps[static_cast<size_t>(s.firstWrite[static_cast<size_t>(gh)])];
        QCOMPARE(add.node, nodeIndex(m, "twice"));
        QCOMPARE(add.overwrite, (std::vector<uint8_t>{0, 0}));
        QCOMPARE(add.zeroFirst, std::vector<int>{gh});
        // The Dense after it overwrites the Add's gradient (its only input).
        const int gt = s.gradient[static_cast<size_t>(nodeIndex(m, "twice"))];
        const ScheduleStep& dense = s.steps[static_cast<size_t>(s.firstWrite[static_cast<size_t>(gt)])];
        QCOMPARE(dense.node, nodeIndex(m, "logits"));
        QCOMPARE(dense.overwrite, std::vector<uint8_t>{1});
    }

    void reluFusionCandidatesNeedASoleReader() {
        const auto m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [4, 4, 2]}},
          {"name": "bn1", "op": "BatchNormalization", "inputs": ["x"]},
          {"name": "r1", "op": "ReLU", "inputs": ["bn1"]},
          {"name": "bn2", "op": "BatchNormalization", "inputs": ["r1"]},
          {"name": "r2", "op": "ReLU", "inputs": ["bn2"]},
          {"name": "sum", "op": "Add", "inputs": ["r2", "bn2"]},
          {"name": "r3", "op": "ReLU", "inputs": ["sum"]},
          {"name": "r4", "op": "ReLU", "inputs": ["r3"]},
          {"name": "bn3", "op": "BatchNormalization", "inputs": ["r4"]},
          {"name": "r5", "op": "ReLU", "inputs": ["bn3"]}
        ])", R"(["r5", "bn3"])");
        const std::vector<int> into = reluFusionCandidates(m, {});
        auto at = [&](const char* name) { return into[static_cast<size_t>(nodeIndex(m, name))]; };
        QCOMPARE(at("r1"), nodeIndex(m, "bn1"));  // sole reader of a batch norm
        QCOMPARE(at("r2"), -1);                   // bn2 is also read by the Add
        QCOMPARE(at("r3"), nodeIndex(m, "sum"));  // sole reader of an Add
        QCOMPARE(at("r4"), -1);                   // a ReLU does not fold into a ReLU
        QCOMPARE(at("r5"), -1);                   // bn3 is a model output
        QCOMPARE(at("bn1"), -1);
        // A loss reading the producer also keeps the ReLU apart.
        QCOMPARE(reluFusionCandidates(m, {nodeIndex(m, "bn1")})[static_cast<size_t>(nodeIndex(m, "r1"))], -1);
    }

    void livenessIntervals() {
        const auto m = buildModel(kSkip);
        const auto ps = ParamStore::create(m, 1);
        const Schedule s = schedule(m, ps, 8, true, size_t{64});
        const StepTimeline t(m, 1);
        const int end = t.end();
        // Inputs, targets, saved state and the workspace live throughout.
        QCOMPARE(s.buffers[static_cast<size_t>(s.value[0])].first, 0);
        QCOMPARE(s.buffers[static_cast<size_t>(s.value[0])].last, end);
        QVERIFY(s.workspace >= 0);
        QCOMPARE(s.kinds[static_cast<size_t>(s.workspace)], BufferKind::Workspace);
        QCOMPARE(s.buffers[static_cast<size_t>(s.workspace)].bytes, size_t{64});
        for (int b : s.target) {
            QCOMPARE(s.kinds[static_cast<size_t>(b)], BufferKind::Target);
            QCOMPARE(s.buffers[static_cast<size_t>(b)].first, 0);
            QCOMPARE(s.buffers[static_cast<size_t>(b)].last, end);
            QCOMPARE(s.buffers[static_cast<size_t>(b)].bytes, size_t{8 * sizeof(float)});
        }
        // d2's value is written at its forward step and read by the Add, whose backward does not
        // read its inputs; the Dense backward of d2 reads h's value, which stays alive until then.
        const int h = nodeIndex(m, "h"), d2 = nodeIndex(m, "d2");
        const LiveBuffer& vh = s.buffers[static_cast<size_t>(s.value[static_cast<size_t>(h)])];
        QCOMPARE(vh.first, t.forward(h));
        QCOMPARE(vh.last, t.backward(d2));
        // A gradient lives from its first writer to its node's backward step.
        const LiveBuffer& gh = s.buffers[static_cast<size_t>(s.gradient[static_cast<size_t>(h)])];
        QCOMPARE(gh.first, s.steps[static_cast<size_t>(
                                       s.firstWrite[static_cast<size_t>(s.gradient[static_cast<size_t>(h)])])]
                               .position);
        QCOMPARE(gh.last, t.backward(h));
    }

    void inferenceHasNoGradients() {
        const auto m = buildModel(kSkip);
        const auto ps = ParamStore::create(m, 1);
        const Schedule s = schedule(m, ps, 4, false);
        QCOMPARE(s.backwardSteps, size_t{0});
        QCOMPARE(s.lossSteps, size_t{1});
        QVERIFY(std::all_of(s.gradient.begin(), s.gradient.end(), [](int b) { return b < 0; }));
        QVERIFY(std::all_of(s.firstWrite.begin(), s.firstWrite.end(), [](int k) { return k < 0; }));
        QCOMPARE(s.workspace, -1);  // none asked for
    }

    void deviceTraitsOnlyChangeWhatTheyDescribe() {
        // BatchNormalization keeps its batch statistics from forward to backward; a device that
        // keeps them elsewhere (a CPU-placed node on CUDA) reports no saved bytes and gets no
        // saved buffer, with the steps unchanged.
        const auto m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [5]}},
          {"name": "bn", "op": "BatchNormalization", "inputs": ["x"]},
          {"name": "logits", "op": "Dense", "inputs": ["bn"], "attrs": {"units": 3}}])");
        const auto ps = ParamStore::create(m, 1);
        const int bn = nodeIndex(m, "bn");
        const Schedule cpu = schedule(m, ps, 4, true);
        QVERIFY(cpu.saved[static_cast<size_t>(bn)] >= 0);
        QCOMPARE(cpu.kinds[static_cast<size_t>(cpu.saved[static_cast<size_t>(bn)])], BufferKind::Saved);
        auto traits = cpuTraits(m, 4);
        traits[static_cast<size_t>(bn)].savedBytes = 0;
        auto losses = resolveLosses(m, sparseLoss(), 4);
        QVERIFY(losses.ok());
        ScheduleOptions o;
        o.batch = 4;
        const Schedule dev = Schedule::build(m, ps, traits, std::move(losses).value(), o);
        QCOMPARE(dev.saved[static_cast<size_t>(bn)], -1);
        QCOMPARE(dev.steps.size(), cpu.steps.size());
        QCOMPARE(dev.buffers.size() + 1, cpu.buffers.size());
    }

    void cpuPlanArenaIsTheSchedulePlacement() {
        const auto m = buildModel(kSkip);
        auto ps = ParamStore::create(m, 1);
        ThreadPool pool(1);
        CompileOptions co;
        co.batch = 8;
        co.losses = sparseLoss();
        auto plan = Plan::compile(m, ps, co, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        size_t workspace = 0;
        cpuTraits(m, 8, &workspace);
        Schedule s = schedule(m, ps, 8, true, workspace);
        const size_t unplanned = s.unplannedBytes(kTensorAlignment);
        QCOMPARE((*plan)->stats().arenaBytes, s.place(kTensorAlignment));
        QCOMPARE((*plan)->stats().unplannedBytes, unplanned);
        QCOMPARE((*plan)->stats().steps, s.steps.size());
    }

    void lossErrorsNameTheField() {
        const auto m = buildModel(kSkip);
        auto losses = sparseLoss();
        losses[0].output = "nowhere";
        auto r = resolveLosses(m, losses, 2);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ConfigError);
        bool named = false;
        for (const auto& [k, v] : r.error().params)
            named = named || (k == "field" && v == "training.loss.output");
        QVERIFY(named);
        losses = sparseLoss();
        losses[0].type = "Dense";
        r = resolveLosses(m, losses, 2);
        QVERIFY(!r.ok());
        named = false;
        for (const auto& [k, v] : r.error().params)
            named = named || (k == "field" && v == "training.loss.type");
        QVERIFY(named);
    }
};

QTEST_APPLESS_MAIN(TestStepSchedule)
#include "tst_step_schedule.moc"
