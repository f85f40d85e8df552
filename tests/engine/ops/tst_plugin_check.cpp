// SPDX-License-Identifier: Apache-2.0
// The plugin check against a plugin built for ABI 1.1, before loss check cases: the losses example
// compiled with the 1.1 header still loads, its Huber loss is checked on the automatic cases, and
// its Quantile loss, whose required attribute no automatic case can fill, is skipped with the
// reason and the way out (check cases, ABI 1.2). The 1.2 build's declared cases are checked in
// tst_plugin_loss. Check cases that cannot be made: a loss check case naming a loss its plugin
// does not describe refuses the plugin at load (PluginError naming the case and the loss), and
// operation and loss cases with wrong shapes (a dimension of 0, no shapes, more values than a
// check allows, an element count past 64 bits, rank 1, different batches, shapes the loss refuses,
// attributes that are not an object) each fail with their error's code and parameters and with
// their finding (what the studio and kiln-train put into words), without aborting and without
// allocating for them.
#include <QtTest>

#include <string>
#include <vector>

#include "engine/ops/plugin_check.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;

namespace {

// A declared check case that cannot be made, and what its failed Shape check must carry.
struct FailedCase {
    const char* name;
    PluginCheck::Finding finding;  // with the parameter "tensor" when `tensor` is not null
    const char* tensor;
    ErrorCode code;
    const char* detail;  // in the English detail
    const char* param;   // a parameter the error carries...
    const char* value;   // ...and its value
};

// Each of `wants` is exactly one failed Shape check among `found(name)`, whose error has the code,
// names `op` and the case and carries the parameter; with `messageNamesCase` its message names the
// case too. The caller returns when QTest::currentTestFailed().
template <typename Found>
void verifyFailedCases(const Found& found, const std::string& op, const std::vector<FailedCase>& wants,
                       bool messageNamesCase) {
    for (const auto& w : wants) {
        const auto got = found(w.name);
        QVERIFY2(got.size() == 1, w.name);
        const PluginCheck& c = got[0];
        QCOMPARE(c.kind, PluginCheck::Kind::Shape);
        QCOMPARE(c.outcome, PluginCheck::Outcome::Failed);
        QVERIFY2(c.detail.find(w.detail) != std::string::npos, c.detail.c_str());
        QCOMPARE(c.finding, w.finding);
        if (w.tensor) QCOMPARE(c.param("tensor"), std::string(w.tensor));
        QVERIFY2(c.error.has_value(), w.name);
        QCOMPARE(c.error->code, w.code);
        QCOMPARE(c.error->param("op"), op);
        QCOMPARE(c.error->param("case"), std::string(w.name));
        QCOMPARE(c.error->param(w.param), std::string(w.value));
        if (messageNamesCase) QVERIFY2(c.error->message.find(w.name) != std::string::npos, c.error->message.c_str());
    }
}

}  // namespace

class TestPluginCheck : public QObject {
    Q_OBJECT

private slots:
    void abi11PluginLossesWithoutCases() {
        auto info = PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/abi_1_1/huber_fbeta.so");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(QString::fromStdString(abiVersionText(info->abiVersion)), QStringLiteral("1.1"));
        QCOMPARE(info->losses, (std::vector<std::string>{"example.Huber", "example.Quantile"}));
        ThreadPool pool(2);
        const PluginLoss* huber = PluginRegistry::global().findLoss("example.Huber");
        QVERIFY(huber && huber->checkCases.empty());
        const auto checks = checkPluginLoss(*huber, pool);
        QCOMPARE(checks.size(), size_t{4});
        for (const auto& c : checks) QVERIFY2(c.outcome == PluginCheck::Outcome::Passed, c.detail.c_str());
        // Values, then gradient, per case; each with its numbers as parameters.
        QCOMPARE(checks[0].finding, PluginCheck::Finding::LossValuesAgree);
        QCOMPARE(checks[0].param("count"), std::string("4"));
        QVERIFY(!checks[0].param("loss").empty());
        QCOMPARE(checks[1].finding, PluginCheck::Finding::GradientAgrees);
        QCOMPARE(checks[0].declaredCase, std::string());
        QCOMPARE(checks[0].predictionsShape, std::string("[4,3]"));
        QCOMPARE(checks[0].targetsShape, std::string("[4,3]"));

        const PluginLoss* quantile = PluginRegistry::global().findLoss("example.Quantile");
        QVERIFY(quantile && quantile->checkCases.empty());
        const auto skipped = checkPluginLoss(*quantile, pool);
        QCOMPARE(skipped.size(), size_t{1});
        QCOMPARE(skipped[0].outcome, PluginCheck::Outcome::Skipped);
        QCOMPARE(skipped[0].finding, PluginCheck::Finding::NoDefaultCase);
        QVERIFY2(skipped[0].param("reason").find("quantile") != std::string::npos, skipped[0].param("reason").c_str());
        QVERIFY2(skipped[0].detail.find("quantile") != std::string::npos &&
                     skipped[0].detail.find("can declare loss check cases (ABI 1.2)") != std::string::npos,
                 skipped[0].detail.c_str());
    }

    // A loss check case naming a loss the plugin does not describe: the plugin is refused, named,
    // and nothing of it is kept, so loading it again says the same.
    void lossCaseNamingAnUnknownLossRefusesThePlugin() {
        const std::string path = KILN_TEST_PLUGIN_DIR "/bad/unknown_case_loss.so";
        for (int attempt = 0; attempt < 2; ++attempt) {
            auto info = PluginRegistry::global().load(path);
            QVERIFY(!info.ok());
            const Error& e = info.error();
            QCOMPARE(e.code, ErrorCode::PluginError);
            QVERIFY2(e.param("path").ends_with("/bad/unknown_case_loss.so"), e.param("path").c_str());
            QCOMPARE(e.param("op"), std::string("unknowncase.Sqaure"));
            QCOMPARE(e.param("case"), std::string("misspelt"));
            QVERIFY2(e.param("reason").find("loss check case 2 (misspelt)") != std::string::npos, e.message.c_str());
            QVERIFY2(e.message.find("does not describe") != std::string::npos, e.message.c_str());
        }
        QVERIFY(PluginRegistry::global().findLoss("unknowncase.Square") == nullptr);
        for (const auto& p : PluginRegistry::global().plugins()) QVERIFY(!p.path.ends_with("/unknown_case_loss.so"));
    }

    // An operation's check cases with wrong shapes: each a failed Shape check with its error; the
    // good case still passes all three checks.
    void opCasesWithBadShapesFailNamed() {
        auto info = PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/bad/bad_cases.so");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        const PluginOp* op = PluginRegistry::global().find("badcase.Double");
        QVERIFY(op);
        ThreadPool pool(2);
        const auto checks = checkPluginOp(*op, pool);
        auto of = [&](const std::string& name) {
            std::vector<PluginCheck> out;
            for (const auto& c : checks)
                if (c.caseName == name) out.push_back(c);
            return out;
        };
        const auto good = of("good");
        QCOMPARE(good.size(), size_t{3});
        for (const auto& c : good) {
            QVERIFY2(c.outcome == PluginCheck::Outcome::Passed, c.detail.c_str());
            QVERIFY(!c.error);
        }
        QCOMPARE(good[0].finding, PluginCheck::Finding::OutputShape);
        QVERIFY2(good[0].detail == "output " + good[0].param("shape"), good[0].detail.c_str());
        QCOMPARE(good[1].finding, PluginCheck::Finding::ForwardAgrees);
        QCOMPARE(good[2].finding, PluginCheck::Finding::GradientAgrees);
        using F = PluginCheck::Finding;
        const std::vector<FailedCase> wants = {
            {"zero width", F::DimensionBelowOne, "input", ErrorCode::ShapeMismatch, "input 0 [2,0] has dimension 0", "shape", "[2,0]"},
            {"no shapes", F::InputsMissing, nullptr, ErrorCode::ShapeMismatch, "its input shapes are missing", "reason",
             "its input shapes are missing"},
            {"huge", F::TooManyValues, "input", ErrorCode::ShapeMismatch, "holds more than 4194304 values", "shape",
             "[1,1099511627776]"},
            {"overflow", F::TooManyValues, "input", ErrorCode::ShapeMismatch, "holds more than 4194304 values", "input", "0"},
            {"attributes not an object", F::AttributesNotObject, nullptr, ErrorCode::ShapeMismatch,
             "its attributes are not a JSON object", "op", "badcase.Double"},
        };
        verifyFailedCases(of, "badcase.Double", wants, true);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(checks.size(), 3 + wants.size());
    }

    // A loss's declared cases with wrong shapes: each a failed Shape check with its error, the
    // shapes as the plugin gave them; the good case passes.
    void lossCasesWithBadShapesFailNamed() {
        auto info = PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/bad/bad_cases.so");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());  // loaded once, the same info after
        const PluginLoss* loss = PluginRegistry::global().findLoss("badcase.Square");
        QVERIFY(loss);
        QCOMPARE(loss->checkCases.size(), size_t{8});
        ThreadPool pool(2);
        const auto checks = checkPluginLoss(*loss, pool);
        auto of = [&](const std::string& name) {
            std::vector<PluginCheck> out;
            for (const auto& c : checks)
                if (c.caseName == name || c.caseName.rfind(name + " (", 0) == 0) out.push_back(c);
            return out;
        };
        const auto good = of("good");
        QCOMPARE(good.size(), size_t{2});  // values and gradient
        for (const auto& c : good) QVERIFY2(c.outcome == PluginCheck::Outcome::Passed, c.detail.c_str());
        using F = PluginCheck::Finding;
        const std::vector<FailedCase> wants = {
            {"rank 1", F::LossShapeRank, "predictions", ErrorCode::ShapeMismatch, "the predictions' shape [4] has rank 1",
             "predictions", "[4]"},
            {"batches differ", F::BatchesDiffer, nullptr, ErrorCode::ShapeMismatch, "have different batches", "targets", "[5,3]"},
            {"zero width", F::DimensionBelowOne, "predictions", ErrorCode::ShapeMismatch, "has dimension 0", "predictions", "[4,0]"},
            {"huge", F::TooManyValues, "predictions", ErrorCode::ShapeMismatch, "holds more than 4194304 values", "predictions",
             "[4,1099511627776]"},
            {"overflow", F::TooManyValues, "predictions", ErrorCode::ShapeMismatch, "holds more than 4194304 values", "targets",
             "[4,4611686018427387904,8]"},
            {"widths differ", F::EngineError, nullptr, ErrorCode::ShapeMismatch, "the same number of values per sample", "op",
             "plugin:badcase.Square"},
            {"attributes not an object", F::AttributesNotObject, nullptr, ErrorCode::ShapeMismatch,
             "its attributes are not a JSON object", "reason", "its attributes are not a JSON object"},
        };
        verifyFailedCases(of, "plugin:badcase.Square", wants, false);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(checks.size(), 2 + wants.size());
    }
};

QTEST_APPLESS_MAIN(TestPluginCheck)
#include "tst_plugin_check.moc"
