// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_eval Qt6::Core
// Evaluation reports against scikit-learn (tests/interop/sklearn_metrics.py): confusion matrix,
// per-class precision/recall/F1 with zero_division=0, macro and weighted averages, log loss, ROC
// curves and AUC, precision-recall curves and average precision per class with many tied scores,
// a class that never occurs, a binary case, and regression MAE/MSE/RMSE/R2. Uses the system's
// python3 with python3-sklearn (Debian), or KILN_SKLEARN_PYTHON; skipped when neither has it.
#include <QtTest/QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/eval/report.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

struct Case {
    int64_t classes = 0;
    std::vector<double> probabilities;
    std::vector<int64_t> labels;
};

// Probabilities from small integer weights, so that equal scores (ties) are frequent.
Case makeCase(int64_t classes, int64_t samples, unsigned seed, int64_t absentClass = -1) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> weight(1, 5), label(0, int(classes) - 1);
    Case c;
    c.classes = classes;
    for (int64_t i = 0; i < samples; ++i) {
        int64_t y = label(gen);
        if (y == absentClass) y = (y + 1) % classes;
        std::vector<double> w(static_cast<size_t>(classes));
        double sum = 0;
        for (auto& v : w) sum += v = weight(gen);
        w[static_cast<size_t>(y)] += 2;  // a model better than chance
        sum += 2;
        for (double v : w) c.probabilities.push_back(v / sum);
        c.labels.push_back(y);
    }
    return c;
}

bool close(double a, double b, double tol = 1e-9) { return std::abs(a - b) <= tol; }

void compareVectors(const std::vector<double>& ours, const json& theirs, const QString& what, bool skipFirst = false) {
    const size_t offset = skipFirst ? 1 : 0;
    QVERIFY2(ours.size() == theirs.size() + offset,
             qPrintable(QStringLiteral("%1: %2 points, scikit-learn %3").arg(what).arg(ours.size()).arg(theirs.size() + offset)));
    for (size_t i = 0; i < theirs.size(); ++i) {
        const double t = theirs[i].is_null() ? std::nan("") : theirs[i].get<double>();
        const double o = ours[i + offset];
        QVERIFY2((std::isnan(t) && std::isnan(o)) || close(o, t),
                 qPrintable(QStringLiteral("%1[%2]: %3 vs scikit-learn %4").arg(what).arg(i + offset).arg(o, 0, 'g', 17).arg(t, 0, 'g', 17)));
    }
}

}  // namespace

class TstSklearnMetrics : public QObject {
    Q_OBJECT
private:
    QString m_python;
    json m_cases;
    json m_results;
    std::map<std::string, Case> m_classification;

private slots:
    void initTestCase() {
        m_python = qEnvironmentVariable("KILN_SKLEARN_PYTHON", QStringLiteral("/usr/bin/python3"));
        QProcess probe;
        probe.start(m_python, {QStringLiteral("-c"), QStringLiteral("import sklearn, numpy")});
        if (!probe.waitForFinished(60000) || probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0)
            QSKIP("scikit-learn is not installed for the system's python3 (Debian package python3-sklearn)");

        m_classification["four_classes"] = makeCase(4, 300, 7);
        m_classification["absent_class"] = makeCase(3, 120, 11, 2);
        m_classification["binary"] = makeCase(2, 200, 13);
        for (const auto& [name, c] : m_classification)
            m_cases[name] = {{"classes", c.classes}, {"probabilities", c.probabilities}, {"labels", c.labels}};
        std::mt19937 gen(17);
        std::normal_distribution<double> normal(0, 1);
        std::vector<double> pred, truth;
        for (int i = 0; i < 100 * 2; ++i) {
            truth.push_back(normal(gen) * 3 + (i % 2) * 5);
            pred.push_back(truth.back() + normal(gen) * 0.7);
        }
        m_cases["regression"] = {{"width", 2}, {"predictions", pred}, {"truths", truth}};

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString input = dir.filePath(QStringLiteral("cases.json"));
        QFile f(input);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(m_cases.dump()));
        f.close();
        QProcess p;
        p.start(m_python, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/sklearn_metrics.py"), input});
        QVERIFY(p.waitForFinished(300000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        m_results = json::parse(p.readAllStandardOutput().toStdString());
    }

    void classificationMatches_data() {
        QTest::addColumn<QString>("name");
        for (const char* n : {"four_classes", "absent_class", "binary"}) QTest::newRow(n) << QString::fromLatin1(n);
    }

    void classificationMatches() {
        QFETCH(QString, name);
        const Case& c = m_classification.at(name.toStdString());
        const json& sk = m_results.at(name.toStdString());
        auto r = eval::evaluateClassification(c.probabilities, c.labels, c.classes);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QVERIFY(close(r->accuracy, sk["accuracy"].get<double>()));
        for (int64_t t = 0; t < c.classes; ++t)
            for (int64_t p = 0; p < c.classes; ++p) QCOMPARE(r->count(t, p), sk["confusion"][size_t(t)][size_t(p)].get<int64_t>());
        for (size_t k = 0; k < size_t(c.classes); ++k) {
            const auto& f = r->perClass[k];
            QVERIFY(close(f.precision, sk["precision"][k].get<double>()));
            QVERIFY(close(f.recall, sk["recall"][k].get<double>()));
            QVERIFY(close(f.f1, sk["f1"][k].get<double>()));
            QCOMPARE(f.support, sk["support"][k].get<int64_t>());
            const QString cls = QStringLiteral("class %1 ").arg(k);
            const json& roc = sk["roc"][k];
            compareVectors(r->roc[k].fpr, roc["fpr"], cls + QStringLiteral("fpr"));
            compareVectors(r->roc[k].tpr, roc["tpr"], cls + QStringLiteral("tpr"));
            // scikit-learn 1.2 makes the first threshold max + 1, later versions +inf: compared after it.
            compareVectors(r->roc[k].thresholds, roc["thresholds"], cls + QStringLiteral("roc thresholds"), true);
            if (roc["auc"].is_null()) {
                QVERIFY(!r->roc[k].defined);
            } else {
                QVERIFY2(close(r->roc[k].auc, roc["auc"].get<double>()),
                         qPrintable(cls + QStringLiteral("auc %1 vs %2").arg(r->roc[k].auc).arg(roc["auc"].get<double>())));
            }
            const json& pr = sk["pr"][k];
            compareVectors(r->pr[k].precision, pr["precision"], cls + QStringLiteral("precision curve"));
            compareVectors(r->pr[k].recall, pr["recall"], cls + QStringLiteral("recall curve"));
            compareVectors(r->pr[k].thresholds, pr["thresholds"], cls + QStringLiteral("pr thresholds"));
            QVERIFY2(close(r->pr[k].averagePrecision, pr["average_precision"].get<double>()),
                     qPrintable(cls + QStringLiteral("AP %1 vs %2").arg(r->pr[k].averagePrecision).arg(pr["average_precision"].get<double>())));
        }
        QVERIFY(close(r->macro.precision, sk["macro"][0].get<double>()));
        QVERIFY(close(r->macro.recall, sk["macro"][1].get<double>()));
        QVERIFY(close(r->macro.f1, sk["macro"][2].get<double>()));
        QVERIFY(close(r->weighted.precision, sk["weighted"][0].get<double>()));
        QVERIFY(close(r->weighted.recall, sk["weighted"][1].get<double>()));
        QVERIFY(close(r->weighted.f1, sk["weighted"][2].get<double>()));
        QVERIFY2(close(r->logLoss, sk["log_loss"].get<double>()),
                 qPrintable(QStringLiteral("log loss %1 vs %2").arg(r->logLoss).arg(sk["log_loss"].get<double>())));
    }

    void regressionMatches() {
        const json& c = m_cases["regression"];
        const json& sk = m_results["regression"];
        auto r = eval::evaluateRegression(c["predictions"].get<std::vector<double>>(), c["truths"].get<std::vector<double>>(), 2);
        QVERIFY(r.ok());
        QVERIFY(close(r->mae, sk["mae"].get<double>()));
        QVERIFY(close(r->mse, sk["mse"].get<double>()));
        QVERIFY(close(r->rmse, sk["rmse"].get<double>()));
        QVERIFY(close(r->r2, sk["r2"].get<double>()));
    }
};

QTEST_GUILESS_MAIN(TstSklearnMetrics)
#include "tst_sklearn_metrics.moc"
