// SPDX-License-Identifier: Apache-2.0
// Model analysis limits: a graph whose activations or parameters are too large to count in
// 64-bit arithmetic is refused with an error naming the node, instead of analysing into
// wrapped-around (negative) sizes and operation counts.
#include <QtTest>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

Result<ops::ModelInfo> analyse(const json& nodes) {
    const json doc = {{"format", "kiln-project"}, {"version", 2}, {"name", "p"}, {"graph", {{"nodes", nodes}}}};
    auto p = io::parseProject(doc.dump(1), "p.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return ops::analyzeModel(p->graph);
}

json input(const json& shape) { return {{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", shape}}}}; }
json dense(int64_t units) { return {{"name", "d"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", units}}}}; }

}  // namespace

class TestModel : public QObject {
    Q_OBJECT
private slots:
    void hugeDenseKernelIsRefused() {
        // 2^31 inputs x 2^30 units: the kernel alone would have 2^61 elements and the node
        // 2^61 multiply-adds; with 2^40 units the counts wrapped around to negative numbers.
        for (int64_t units : {int64_t(1) << 30, int64_t(1099511776)}) {
            auto m = analyse({input({int64_t(1) << 31}), dense(units)});
            QVERIFY(!m.ok());
            QCOMPARE(errorCodeName(m.error().code), errorCodeName(ErrorCode::ShapeMismatch));
            QCOMPARE(m.error().node, std::string("d"));
            QVERIFY2(m.error().message.find("parameter \"kernel\"") != std::string::npos, m.error().message.c_str());
        }
    }

    void hugeInputIsRefused() {
        auto m = analyse({input({int64_t(1) << 20, int64_t(1) << 20}), dense(4)});
        QVERIFY(!m.ok());
        QCOMPARE(m.error().node, std::string("x"));
        QVERIFY2(m.error().message.find("its output") != std::string::npos, m.error().message.c_str());
        QVERIFY2(m.error().message.find("more than 2147483648 elements") != std::string::npos, m.error().message.c_str());
    }

    void largestTensorsStillAnalyse() {
        // Exactly 2^31 elements per sample and a 2^31-element kernel are within the limit, and
        // every count is a real, non-negative number.
        auto m = analyse({input({int64_t(1) << 31}), dense(1)});
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().message.c_str());
        QCOMPARE(m->parameterCount(true), (int64_t(1) << 31) + 1);
        for (const auto& n : m->nodes) QVERIFY(n.macs >= 0);
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
