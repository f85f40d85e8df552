// SPDX-License-Identifier: Apache-2.0
// ONNX's backend node tests (one small model per case with inputs and the expected outputs, as
// Debian's libonnx-testdata installs them; or KILN_ONNX_TESTDATA; or the onnx package of the
// Python environment) against Kiln's ONNX reader: every case whose operations are all among the
// ones the reader claims (onnxOpsRead) is imported and run by Kiln. A case the reader refuses
// (an attribute, a rank or a data type it does not take) must say why; a case it imports must give
// ONNX's outputs within 1e-4 (+ 1e-4 relative). Every claimed operation that the data has cases of
// must have one that passes, except the ones named below with the reason. Skips when no test data
// is found.
// kiln-test-timeout: 900
#include <QtTest>

#include <QDir>
#include <QProcess>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/onnx_import.h"
#include "engine/ops/model.h"
#include "tests/python_env.h"

using namespace kiln::engine;

namespace {

std::string readFile(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

struct Array {
    onnx::TensorProto proto;
    std::string name;
    std::vector<int64_t> dims;
    std::vector<float> values;
};

// A tensor file of a case as float32; nullopt for a data type Kiln does not compute in.
std::optional<Array> readArray(const QString& path) {
    onnx::TensorProto t;
    if (!t.ParseFromString(readFile(path))) return std::nullopt;
    Array a;
    a.proto = t;
    a.name = t.name();
    int64_t n = 1;
    for (int64_t d : t.dims()) {
        a.dims.push_back(d);
        n *= d;
    }
    const std::string& raw = t.raw_data();
    auto fromRaw = [&](auto zero) {
        using T = decltype(zero);
        if (raw.size() != static_cast<size_t>(n) * sizeof(T)) return false;
        for (int64_t k = 0; k < n; ++k) {
            T v;
            std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
            a.values.push_back(static_cast<float>(v));
        }
        return true;
    };
    bool ok = false;
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
        ok = t.has_raw_data() ? fromRaw(float{}) : (a.values.assign(t.float_data().begin(), t.float_data().end()), true);
        break;
    case onnx::TensorProto::DOUBLE:
        ok = t.has_raw_data() ? fromRaw(double{}) : (a.values.assign(t.double_data().begin(), t.double_data().end()), true);
        break;
    case onnx::TensorProto::INT64:
        ok = t.has_raw_data() ? fromRaw(int64_t{}) : (a.values.assign(t.int64_data().begin(), t.int64_data().end()), true);
        break;
    case onnx::TensorProto::INT32:
        ok = t.has_raw_data() ? fromRaw(int32_t{}) : (a.values.assign(t.int32_data().begin(), t.int32_data().end()), true);
        break;
    default: return std::nullopt;
    }
    if (!ok || static_cast<int64_t>(a.values.size()) != n) return std::nullopt;
    return a;
}

// NCHW -> NHWC of a rank-4 array.
std::vector<float> toChannelsLast(const Array& a) {
    const int64_t n = a.dims[0], c = a.dims[1], h = a.dims[2], w = a.dims[3];
    std::vector<float> out(a.values.size());
    for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t y = 0; y < h; ++y)
                for (int64_t x = 0; x < w; ++x) out[((b * h + y) * w + x) * c + ch] = a.values[((b * c + ch) * h + y) * w + x];
    return out;
}

// The folder of the node cases: KILN_ONNX_TESTDATA, Debian's libonnx-testdata, or the onnx
// package of the Python environment (tools/py_env.sh).
QString nodeCasesDir() {
    auto nodeDir = [](const QString& base) {
        for (const QString& d : {base + "/node", base + "/data/node", base})
            if (QFileInfo::exists(d + "/test_relu/model.onnx")) return d;
        return QString();
    };
    if (const QByteArray env = qgetenv("KILN_ONNX_TESTDATA"); !env.isEmpty())
        if (QString d = nodeDir(QString::fromLocal8Bit(env)); !d.isEmpty()) return d;
    if (QString d = nodeDir(QStringLiteral("/usr/share/libonnx-testdata")); !d.isEmpty()) return d;
    const QString python = kiln::test::pythonEnvInterpreter();
    if (python.isEmpty()) return {};
    QProcess py;
    py.start(python, {QStringLiteral("-c"), QStringLiteral("import onnx, os; print(os.path.dirname(onnx.__file__))")});
    if (!py.waitForFinished(120000) || py.exitCode() != 0) return {};
    return nodeDir(QString::fromUtf8(py.readAllStandardOutput()).trimmed() + "/backend/test/data");
}

enum class Outcome { Passed,
                     Refused,
                     Wrong };

struct CaseResult {
    Outcome outcome = Outcome::Refused;
    std::string detail;
};

// Appends a Transpose to NHWC behind each rank-4 graph output: Kiln's outputs are channels-last.
onnx::ModelProto withChannelsLastOutputs(const onnx::ModelProto& m, const std::set<std::string>& rank4) {
    onnx::ModelProto out = m;
    auto* g = out.mutable_graph();
    for (auto& o : *g->mutable_output()) {
        if (!rank4.count(o.name())) continue;
        auto* t = g->add_node();
        t->set_op_type("Transpose");
        t->add_input(o.name());
        t->add_output(o.name() + "_nhwc");
        auto* perm = t->add_attribute();
        perm->set_name("perm");
        perm->set_type(onnx::AttributeProto::INTS);
        for (int p : {0, 2, 3, 1}) perm->add_ints(p);
        o.set_name(o.name() + "_nhwc");
        o.clear_type();
    }
    return out;
}

// The case with every input but the first given as a constant (an initializer), as real models
// hold weights, kernel sizes, pads and scales; the cases feed them as inputs.
onnx::ModelProto withConstantInputs(const onnx::ModelProto& m, const std::vector<Array>& ins) {
    onnx::ModelProto out = m;
    auto* g = out.mutable_graph();
    for (size_t k = 1; k < ins.size(); ++k) {
        onnx::TensorProto t = ins[k].proto;
        t.set_name(ins[k].name);
        *g->add_initializer() = t;
    }
    return out;
}

// Imports `m`. Tried again, each when the reader says so: with the default-domain opset raised to
// 7 (the oldest Kiln reads; cases of operations unchanged since opset 1 declare 1: a changed
// meaning would show as wrong numbers), without the optional outputs Kiln does not make
// (LayerNormalization's Mean and InvStdDev; `outs` loses them too), and with channels-last outputs.
Result<io::ImportedModel> importCase(onnx::ModelProto m, std::vector<Array>& outs, const std::string& file, bool* transposed) {
    auto imported = io::importOnnx(m.SerializeAsString(), file);
    if (!imported.ok() && imported.error().message.find("is too old") != std::string::npos) {
        for (auto& o : *m.mutable_opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(std::max<int64_t>(o.version(), 7));
        imported = io::importOnnx(m.SerializeAsString(), file);
    }
    for (int tries = 0; !imported.ok() && tries < 4 && imported.error().message.find("is not produced by any node") != std::string::npos; ++tries) {
        auto* g = m.mutable_graph();
        const std::string& msg = imported.error().message;
        bool dropped = false;
        for (int k = 0; k < g->output_size() && !dropped; ++k) {
            const std::string name = g->output(k).name();
            if (msg.find("\"" + name + "\"") == std::string::npos || k == 0) continue;
            g->mutable_output()->DeleteSubrange(k, 1);
            outs.erase(outs.begin() + k);
            dropped = true;
        }
        if (!dropped) break;
        imported = io::importOnnx(m.SerializeAsString(), file);
    }
    *transposed = false;
    if (!imported.ok() && imported.error().message.find("channel-first") != std::string::npos) {
        std::set<std::string> rank4;
        for (const auto& o : outs)
            if (o.dims.size() == 4) rank4.insert(o.name);
        imported = io::importOnnx(withChannelsLastOutputs(m, rank4).SerializeAsString(), file);
        *transposed = true;
    }
    return imported;
}

CaseResult runCase(const QString& dir, ThreadPool& pool) {
    CaseResult res;
    onnx::ModelProto m;
    if (!m.ParseFromString(readFile(dir + "/model.onnx"))) return {Outcome::Refused, "the model does not parse"};
    const QString data = dir + "/test_data_set_0";
    std::vector<Array> ins, outs;
    for (int k = 0; QFileInfo::exists(data + QString("/input_%1.pb").arg(k)); ++k) {
        auto a = readArray(data + QString("/input_%1.pb").arg(k));
        if (!a) return {Outcome::Refused, "input " + std::to_string(k) + " has a data type Kiln does not take"};
        ins.push_back(std::move(*a));
    }
    for (int k = 0; QFileInfo::exists(data + QString("/output_%1.pb").arg(k)); ++k) {
        auto a = readArray(data + QString("/output_%1.pb").arg(k));
        if (!a) return {Outcome::Refused, "output " + std::to_string(k) + " has a data type Kiln does not give"};
        outs.push_back(std::move(*a));
    }
    // Name the arrays after the graph's inputs and outputs (the files may leave names out).
    std::vector<std::string> graphInputs;
    std::set<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.insert(t.name());
    for (const auto& v : m.graph().input())
        if (!inits.count(v.name())) graphInputs.push_back(v.name());
    if (graphInputs.size() != ins.size() || m.graph().output_size() != static_cast<int>(outs.size()))
        return {Outcome::Refused, "the case's data does not match its graph"};
    for (size_t k = 0; k < ins.size(); ++k) ins[k].name = graphInputs[k];
    for (size_t k = 0; k < outs.size(); ++k) outs[k].name = m.graph().output(static_cast<int>(k)).name();

    const std::string file = (dir + "/model.onnx").toStdString();
    bool transposed = false;
    auto imported = importCase(m, outs, file, &transposed);
    if (!imported.ok() && ins.size() > 1) {
        if (imported.error().message.empty()) return {Outcome::Wrong, "an error without a message"};
        imported = importCase(withConstantInputs(m, ins), outs, file, &transposed);
        if (imported.ok()) ins.resize(1);
    }
    if (!imported.ok()) {
        if (imported.error().message.empty()) return {Outcome::Wrong, "an error without a message"};
        return {Outcome::Refused, imported.error().message};
    }
    if (outs.empty()) return {Outcome::Refused, "no output left to compare"};
    auto info = ops::analyzeModel(imported->graph);
    if (!info.ok()) return {Outcome::Wrong, "imported, but the graph does not analyse: " + info.error().toString()};
    auto params = exec::ParamStore::create(*info, 0);
    if (auto w = io::applyWeights(*imported, params); !w.ok()) return {Outcome::Wrong, "weights: " + w.error().toString()};
    if (imported->inputs.size() != ins.size()) return {Outcome::Refused, "Kiln's graph takes other inputs"};
    exec::CompileOptions copt;
    copt.batch = ins.empty() ? 1 : ins[0].dims.empty() ? 1
                                                       : ins[0].dims[0];
    copt.training = false;
    auto plan = exec::Plan::compile(*info, params, copt, pool);
    if (!plan.ok()) {
        // Kiln's plan refuses some shapes its analysis accepts (a batch that differs between
        // inputs): a refusal with a reason, not a wrong answer.
        if (plan.error().code == ErrorCode::Internal) return {Outcome::Wrong, "plan: " + plan.error().toString()};
        return {Outcome::Refused, "plan: " + plan.error().message};
    }
    for (size_t k = 0; k < ins.size(); ++k) {
        const auto it = std::find(imported->inputs.begin(), imported->inputs.end(), ins[k].name);
        if (it == imported->inputs.end()) return {Outcome::Refused, "input " + ins[k].name + " is not an input of Kiln's graph"};
        const size_t slot = static_cast<size_t>(it - imported->inputs.begin());
        const std::vector<float> v = imported->inputChannelFirst[slot] && ins[k].dims.size() == 4 ? toChannelsLast(ins[k]) : ins[k].values;
        int64_t numel = copt.batch;
        for (int64_t d : imported->graph.node(imported->inputs[slot])->attrs.getInts("shape")) numel *= d;
        if (numel != static_cast<int64_t>(v.size())) return {Outcome::Refused, "input " + ins[k].name + " has another size in Kiln"};
        std::memcpy((*plan)->input(slot), v.data(), v.size() * sizeof(float));
    }
    if (auto fwd = (*plan)->forward(); !fwd.ok()) return {Outcome::Wrong, "forward: " + fwd.error().toString()};
    double worst = 0.0;
    for (size_t k = 0; k < outs.size(); ++k) {
        const std::vector<float> want = transposed && outs[k].dims.size() == 4 ? toChannelsLast(outs[k]) : outs[k].values;
        if ((*plan)->outputShape(k).numel() != static_cast<int64_t>(want.size()))
            return {Outcome::Wrong, "output " + std::to_string(k) + " has " + std::to_string((*plan)->outputShape(k).numel()) + " values, ONNX " +
                                        std::to_string(want.size())};
        const float* got = (*plan)->output(k);
        for (size_t e = 0; e < want.size(); ++e) {
            if (got[e] == want[e] || (std::isnan(got[e]) && std::isnan(want[e]))) continue;  // infinities, NaN (Cast keeps them)
            const double excess = std::fabs(double(got[e]) - want[e]) / (1e-4 + 1e-4 * std::fabs(double(want[e])));
            if (!(excess <= 1.0))
                return {Outcome::Wrong, "output " + std::to_string(k) + " element " + std::to_string(e) + ": Kiln " + std::to_string(got[e]) + ", ONNX " +
                                            std::to_string(want[e])};
            worst = std::max(worst, std::fabs(double(got[e]) - want[e]));
        }
    }
    return {Outcome::Passed, "max |diff| " + std::to_string(worst)};
}

}  // namespace

class TestOnnxBackendNodes : public QObject {
    Q_OBJECT

private slots:
    void claimedOperationsPass() {
        const QString root = nodeCasesDir();
        if (root.isEmpty()) QSKIP("no ONNX backend node tests (libonnx-testdata, KILN_ONNX_TESTDATA or the Python environment's onnx)");
        qInfo("node cases: %s", qPrintable(root));
        const std::vector<std::string>& claimed = io::onnxOpsRead();
        const std::set<std::string> claimedSet(claimed.begin(), claimed.end());
        // Claimed operations no standalone case can show, and why.
        const std::map<std::string, std::string> noStandaloneCase{
            {"Constant", "every case ends in a Constant, which Kiln folds away: a graph of no node"},
            {"Shape",
             "folded while reading into a constant for the shape arithmetic of a Reshape; every case's output is the shape "
             "itself, a constant, not a value Kiln computes"},
        };
        ThreadPool pool(2);
        std::map<std::string, int> passedBy, casesOf;
        int passed = 0, refused = 0;
        QStringList wrong;
        const auto cases = QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        for (const QString& name : cases) {
            const QString dir = root + "/" + name;
            onnx::ModelProto m;
            if (!m.ParseFromString(readFile(dir + "/model.onnx"))) continue;
            std::set<std::string> ops;
            bool all = m.graph().node_size() > 0;
            for (const auto& n : m.graph().node()) {
                const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
                all = all && defaultDomain && claimedSet.count(n.op_type());
                ops.insert(n.op_type());
            }
            if (!all) continue;
            for (const auto& op : ops) ++casesOf[op];
            const CaseResult r = runCase(dir, pool);
            switch (r.outcome) {
            case Outcome::Passed:
                ++passed;
                for (const auto& op : ops) ++passedBy[op];
                qInfo("pass    %s (%s)", qPrintable(name), r.detail.c_str());
                break;
            case Outcome::Refused:
                ++refused;
                qInfo("refused %s: %s", qPrintable(name), r.detail.c_str());
                break;
            case Outcome::Wrong: wrong << name + ": " + QString::fromStdString(r.detail); break;
            }
        }
        qInfo("%d cases of claimed operations: %d pass, %d refused with a reason, %lld wrong", passed + refused + int(wrong.size()), passed, refused,
              static_cast<long long>(wrong.size()));
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("\n")));
        QStringList uncovered;
        for (const auto& op : claimed) {
            if (passedBy[op] > 0) continue;
            if (casesOf[op] == 0) {
                qInfo("%s: no case in this test data", op.c_str());
                continue;
            }
            if (noStandaloneCase.count(op)) {
                qInfo("%s: no passing case (%s)", op.c_str(), noStandaloneCase.at(op).c_str());
                continue;
            }
            uncovered << QString::fromStdString(op) + QStringLiteral(" (%1 cases)").arg(casesOf[op]);
        }
        QVERIFY2(uncovered.isEmpty(), qPrintable("claimed operations with no passing case: " + uncovered.join(", ")));
    }
};

QTEST_GUILESS_MAIN(TestOnnxBackendNodes)
#include "tst_onnx_backend_nodes.moc"
