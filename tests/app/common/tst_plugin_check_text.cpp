// SPDX-License-Identifier: Apache-2.0
// The words of plugin check results (app/common/plugin_check_text), composed from each check's
// finding and parameters: over every check of the example plugins and the test plugins that fail
// in many ways (cases that cannot be made, losses that are not finite, fail, couple samples or
// have half their gradient), the English words are the engine's own English detail, word for word
// (for an engine error: Kiln's headline for its code, then the engine's message), and so is the
// case's name. With a translator installed, every word comes from it, under PluginCheckText.
// kiln-test-libs: kiln_app_common kiln_engine_all
#include <QtTest>

#include <QTranslator>

#include <set>
#include <string>

#include "app/common/error_text.h"
#include "app/common/plugin_check_text.h"
#include "engine/api/plugins.h"

using namespace kiln;
namespace api = kiln::engine::api;

namespace {

const std::string kPluginDir = KILN_TEST_PLUGIN_DIR;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// Marks every text it is asked for under PluginCheckText: «source».
class MarkingTranslator : public QTranslator {
public:
    QString translate(const char* context, const char* source, const char* /*disambiguation*/, int /*n*/) const override {
        if (QByteArrayView(context) != QByteArrayView("PluginCheckText")) return {};
        return QStringLiteral("«") + QString::fromUtf8(source) + QStringLiteral("»");
    }
    bool isEmpty() const override { return false; }
};

// The checks of the plugin at `path`, loaded now.
std::vector<api::PluginCheckRun> checksOf(const std::string& path) {
    auto lib = api::loadPlugin(path);
    if (!lib.ok()) qFatal("%s: %s", path.c_str(), lib.error().message.c_str());
    return api::checkPlugin(lib->path, 2);
}

}  // namespace

class TestPluginCheckText : public QObject {
    Q_OBJECT

private slots:
    void englishIsTheEnginesWords() {
        std::set<api::PluginCheckFinding> seen;
        int checks = 0;
        for (const char* plugin : {"/group_norm.so", "/abi_1_1/huber_fbeta.so", "/bad/bad_cases.so", "/bad/bad_loss.so"}) {
            for (const auto& run : checksOf(kPluginDir + plugin)) {
                for (const auto& c : run.checks) {
                    ++checks;
                    seen.insert(c.finding);
                    const QString where = q(run.op + " / " + c.caseName + ": " + c.detail);
                    QVERIFY2(app::PluginCheckText::caseText(c) == q(c.caseName), qPrintable(where));
                    const QString words = app::PluginCheckText::detail(c);
                    if (c.finding != api::PluginCheckFinding::EngineError) {
                        QVERIFY2(words == q(c.detail), qPrintable(where + QStringLiteral(" <> ") + words));
                        continue;
                    }
                    // An engine error: the headline of its code, then the engine's message.
                    QVERIFY2(c.error.has_value(), qPrintable(where));
                    QVERIFY2(!c.param("message").empty() && words.endsWith(q(c.param("message"))), qPrintable(words));
                    QVERIFY2(words.contains(app::ErrorText::headline(*c.error) + QStringLiteral(": ")), qPrintable(words));
                    QVERIFY2(q(c.detail).endsWith(q(c.param("message"))), qPrintable(where));
                }
            }
        }
        QVERIFY(checks >= 30);
        using F = api::PluginCheckFinding;
        for (F f : {F::OutputShape, F::ForwardAgrees, F::GradientAgrees, F::LossValuesAgree, F::NoDefaultCase,
                    F::AttributesNotObject, F::InputsMissing, F::LossShapeRank, F::DimensionBelowOne, F::TooManyValues,
                    F::BatchesDiffer, F::EngineError, F::LossNotFinite, F::LossNotPerSample, F::LossGradientMismatch})
            QVERIFY2(seen.count(f), qPrintable(QString::number(int(f))));
    }

    // Every word goes through the translator, the numbers, shapes and names as parameters.
    void wordsComeFromTheTranslator() {
        MarkingTranslator marking;
        QVERIFY(QCoreApplication::installTranslator(&marking));
        bool output = false, loss = false;
        for (const auto& run : checksOf(kPluginDir + "/abi_1_1/huber_fbeta.so")) {
            for (const auto& c : run.checks) {
                const QString words = app::PluginCheckText::detail(c);
                QVERIFY2(words.startsWith(QStringLiteral("«")), qPrintable(words));
                if (c.finding == api::PluginCheckFinding::LossValuesAgree) {
                    QCOMPARE(words, QStringLiteral("«%1 per-sample values, finite, the same with and without gradients; loss %2»")
                                        .arg(q(c.param("count")), q(c.param("loss"))));
                    QCOMPARE(app::PluginCheckText::caseText(c),
                             QStringLiteral("«predictions %1, targets %2»").arg(q(c.predictionsShape), q(c.targetsShape)));
                    loss = true;
                }
            }
        }
        for (const auto& run : checksOf(kPluginDir + "/group_norm.so"))
            for (const auto& c : run.checks)
                if (c.finding == api::PluginCheckFinding::OutputShape) {
                    QCOMPARE(app::PluginCheckText::detail(c), QStringLiteral("«output %1»").arg(q(c.param("shape"))));
                    QCOMPARE(app::PluginCheckText::caseText(c), q(c.caseName));  // the plugin's own name
                    output = true;
                }
        QCoreApplication::removeTranslator(&marking);
        QVERIFY(output && loss);
    }
};

QTEST_GUILESS_MAIN(TestPluginCheckText)
#include "tst_plugin_check_text.moc"
