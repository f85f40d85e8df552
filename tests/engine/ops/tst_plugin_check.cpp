// SPDX-License-Identifier: Apache-2.0
// The plugin check against a plugin built for ABI 1.1, before loss check cases: the losses example
// compiled with the 1.1 header still loads, its Huber loss is checked on the automatic cases, and
// its Quantile loss, whose required attribute no automatic case can fill, is skipped with the
// reason and the way out (check cases, ABI 1.2). The 1.2 build's declared cases are checked in
// tst_plugin_loss.
#include <QtTest>

#include <string>

#include "engine/ops/plugin_check.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;

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

        const PluginLoss* quantile = PluginRegistry::global().findLoss("example.Quantile");
        QVERIFY(quantile && quantile->checkCases.empty());
        const auto skipped = checkPluginLoss(*quantile, pool);
        QCOMPARE(skipped.size(), size_t{1});
        QCOMPARE(skipped[0].outcome, PluginCheck::Outcome::Skipped);
        QVERIFY2(skipped[0].detail.find("quantile") != std::string::npos &&
                     skipped[0].detail.find("can declare loss check cases (ABI 1.2)") != std::string::npos,
                 skipped[0].detail.c_str());
    }
};

QTEST_APPLESS_MAIN(TestPluginCheck)
#include "tst_plugin_check.moc"
