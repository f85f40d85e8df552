// kiln-test-timeout: 600
// SPDX-License-Identifier: Apache-2.0
// New rows of a csv table project, end to end: a table with a one-hot column and standardised
// numbers is trained with kiln-train; its test rows, written to a file of their own, are then
// evaluated with kiln-eval --split FILE and predicted with kiln-predict (also with the columns in
// another order, an extra column and no label), each row getting the probabilities kiln-eval
// --split test gave it, named by its file and line. Rows that do not fit the project's table (a
// missing column, an unknown category, text in a number column, a missing label for kiln-eval, a
// label that is no class) exit 2 with a message naming the file, line and column.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTemporaryDir>

#include <cmath>

#include "app_test_util.h"

namespace {

using kiln::test::program;
using kiln::test::Run;
using kiln::test::writeFile;

Run run(const char* name, const QStringList& args) {
    return kiln::test::runProgram(name, args);
}

const char* const kShades[3] = {"light", "grey", "dark"};

// Row i of the table: size, shade, weight, label. The class follows the shade, blurred by size.
QStringList tableRow(int i) {
    const int label = (i * 7 + i / 5) % 3;
    const int shade = (label + (i % 5 == 0 ? 1 : 0)) % 3;
    return {QString::number(10 + (i * 13) % 40 + label * 5), QLatin1String(kShades[shade]),
            QString::number(0.25 * ((i * 11) % 17), 'g', 6), QString::number(label)};
}

// The records of a samples CSV (header "index,source,true,predicted,confidence,loss,correct,..."),
// keyed by the line number their source names.
struct Sample {
    QString predicted;
    double confidence = 0;
    double loss = 0;
    QString truth;
    QStringList features;  // the cells after "correct": the row's values as the file holds them
};

QMap<int, Sample> readSamples(const QString& path) {
    QMap<int, Sample> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return out;
    const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split(QLatin1Char('\n'));
    for (qsizetype l = 1; l < lines.size(); ++l) {
        const QStringList cells = lines[l].split(QLatin1Char(','));
        Sample s;
        s.truth = cells.value(2);
        s.predicted = cells.value(3);
        s.confidence = cells.value(4).toDouble();
        s.loss = cells.value(5).toDouble();
        s.features = cells.mid(7);
        out.insert(cells.value(1).section(QLatin1Char(':'), -1).toInt(), s);
    }
    return out;
}

}  // namespace

class TestKilnEvalTableRows : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(program("kiln-eval")));
        QVERIFY(QFileInfo::exists(program("kiln-predict")));
        QVERIFY(m_dir.isValid());
        QByteArray table = "size,shade,weight,label\n";
        for (int i = 0; i < 90; ++i) table += tableRow(i).join(QLatin1Char(',')).toUtf8() + '\n';
        writeFile(m_dir.filePath(QStringLiteral("table.csv")), table);
        m_project = m_dir.filePath(QStringLiteral("table.kiln"));
        writeFile(m_project,
                  "{\"format\": \"kiln-project\", \"version\": 2,\n"
                  " \"graph\": {\"nodes\": [\n"
                  "  {\"name\": \"x\", \"op\": \"Input\", \"attrs\": {\"shape\": [5]}},\n"
                  "  {\"name\": \"hidden\", \"op\": \"Dense\", \"inputs\": [\"x\"], \"attrs\": {\"units\": 8, \"activation\": \"relu\"}},\n"
                  "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"hidden\"], \"attrs\": {\"units\": 3}}]},\n"
                  " \"data\": {\"format\": \"csv\", \"path\": \"table.csv\", \"header\": true, \"label_column\": \"label\",\n"
                  "          \"categorical_columns\": [\"shade\"], \"standardize\": true, \"split\": {\"test\": 0.3}},\n"
                  " \"training\": {\"epochs\": 3, \"batch_size\": 8, \"seed\": 4, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05},\n"
                  "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n");
        m_runDir = m_dir.filePath(QStringLiteral("run"));
        Run t = run("kiln-train", {m_project, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), m_runDir,
                                   QStringLiteral("--run-store"), QStringLiteral("none")});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));

        // The test split as kiln-eval sees it: each row (by its line in table.csv) with its
        // predicted class, confidence and loss.
        const QString samples = m_dir.filePath(QStringLiteral("test_samples.csv"));
        Run e = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--json"), QStringLiteral("--samples-csv"),
                                  samples, QStringLiteral("--no-cache")});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err));
        m_testReport = QJsonDocument::fromJson(e.out.trimmed().toUtf8()).object();
        m_test = readSamples(samples);
        QVERIFY2(m_test.size() >= 20, qPrintable(QString::number(m_test.size())));  // 30 % of 90 rows
        m_testLines = m_test.keys();
    }

    // The test rows in a file of their own, label included: kiln-eval --split FILE gives each the
    // probabilities of --split test, and the same report.
    void evaluatesRowsOfAFile() {
        QByteArray rows = "size,shade,weight,label\n";
        for (int line : m_testLines) rows += tableRow(line - 2).join(QLatin1Char(',')).toUtf8() + '\n';
        const QString rowsPath = m_dir.filePath(QStringLiteral("rows.csv"));
        writeFile(rowsPath, rows);
        const QString samples = m_dir.filePath(QStringLiteral("rows_samples.csv"));
        Run e = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"), rowsPath,
                                  QStringLiteral("--json"), QStringLiteral("--samples-csv"), samples});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err));
        const QJsonObject j = QJsonDocument::fromJson(e.out.trimmed().toUtf8()).object();
        QCOMPARE(j.value(QStringLiteral("samples")).toInt(), m_testLines.size());
        QCOMPARE(j.value(QStringLiteral("confusion_matrix")), m_testReport.value(QStringLiteral("confusion_matrix")));
        QVERIFY(std::abs(j.value(QStringLiteral("loss")).toDouble() - m_testReport.value(QStringLiteral("loss")).toDouble()) < 1e-6);
        QCOMPARE(j.value(QStringLiteral("feature_names")).toArray(),
                 (QJsonArray{QStringLiteral("size"), QStringLiteral("shade"), QStringLiteral("weight")}));
        const QMap<int, Sample> got = readSamples(samples);
        QCOMPARE(got.size(), m_testLines.size());
        for (qsizetype k = 0; k < m_testLines.size(); ++k) {
            const Sample& want = m_test[m_testLines[k]];
            const Sample& have = got[int(k) + 2];  // the row's line in rows.csv, after the header
            QCOMPARE(have.truth, want.truth);
            const QStringList row = tableRow(m_testLines[k] - 2);
            QCOMPARE(have.features, row.mid(0, 3));  // size, shade, weight: not standardised
            QCOMPARE(have.predicted, want.predicted);
            QVERIFY2(std::abs(have.confidence - want.confidence) < 1e-6, qPrintable(QString::number(have.confidence - want.confidence)));
            QVERIFY2(std::abs(have.loss - want.loss) < 1e-5, qPrintable(QString::number(have.loss - want.loss)));
        }
    }

    // kiln-predict on the same rows with the columns in another order, an extra column and no
    // label: every class's probability, named by the file and line.
    void predictsRowsWithoutLabel() {
        QByteArray rows = "note,weight,shade,size\n";
        for (int line : m_testLines) {
            const QStringList r = tableRow(line - 2);
            rows += "n" + QByteArray::number(line) + ',' + r[2].toUtf8() + ',' + r[1].toUtf8() + ',' + r[0].toUtf8() + '\n';
        }
        const QString rowsPath = m_dir.filePath(QStringLiteral("unlabelled.csv"));
        writeFile(rowsPath, rows);
        Run p = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, rowsPath, QStringLiteral("--top-k"), QStringLiteral("3"),
                                     QStringLiteral("--json")});
        QVERIFY2(p.exitCode == 0, qPrintable(p.err));
        const QJsonObject j = QJsonDocument::fromJson(p.out.trimmed().toUtf8()).object();
        const QJsonArray predictions = j.value(QStringLiteral("predictions")).toArray();
        QCOMPARE(predictions.size(), m_testLines.size());
        for (qsizetype k = 0; k < predictions.size(); ++k) {
            const QJsonObject row = predictions[k].toObject();
            const Sample& want = m_test[m_testLines[k]];
            const QString source = row.value(QStringLiteral("source")).toString();
            QCOMPARE(source.section(QLatin1Char(':'), -1).toInt(), int(k) + 2);
            QCOMPARE(QFileInfo(source.section(QLatin1Char(':'), 0, -2)).canonicalFilePath(), QFileInfo(rowsPath).canonicalFilePath());
            QCOMPARE(row.value(QStringLiteral("predicted")).toString(), want.predicted);
            const QJsonArray top = row.value(QStringLiteral("top_k")).toArray();
            QCOMPARE(top.size(), 3);
            double sum = 0, trueProbability = -1;
            for (const auto& c : top) {
                const double probability = c.toObject().value(QStringLiteral("probability")).toDouble();
                sum += probability;
                if (c.toObject().value(QStringLiteral("class")).toString() == want.truth) trueProbability = probability;
            }
            QVERIFY(std::abs(sum - 1.0) < 1e-5);
            QVERIFY2(std::abs(top[0].toObject().value(QStringLiteral("probability")).toDouble() - want.confidence) < 1e-6,
                     qPrintable(row.value(QStringLiteral("source")).toString()));
            QVERIFY2(std::abs(trueProbability - std::exp(-want.loss)) < 1e-6, qPrintable(row.value(QStringLiteral("source")).toString()));
        }
    }

    // Rows that do not fit the project's table: exit 2, the file, the line and what is wrong.
    void badRowsExitTwo() {
        struct Case {
            const char* name;
            QByteArray text;
            const char* program;
            QStringList expected;  // in the message
        };
        const QList<Case> cases = {
            {"no_weight.csv", "size,shade,label\n12,grey,1\n", "kiln-predict", {QStringLiteral("no_weight.csv:1"), QStringLiteral("\"weight\"")}},
            {"purple.csv", "size,shade,weight\n12,grey,1\n14,purple,2\n", "kiln-predict", {QStringLiteral("purple.csv:3:2"), QStringLiteral("\"purple\""), QStringLiteral("shade"), QStringLiteral("dark, grey, light")}},
            {"heavy.csv", "size,shade,weight\n12,grey,heavy\n", "kiln-predict", {QStringLiteral("heavy.csv:2:3"), QStringLiteral("\"heavy\" is not a number"), QStringLiteral("weight")}},
            {"no_label.csv", "size,shade,weight\n12,grey,1\n", "kiln-eval", {QStringLiteral("no_label.csv:1"), QStringLiteral("\"label\"")}},
            {"class7.csv", "size,shade,weight,label\n12,grey,1,0\n12,grey,1,7\n", "kiln-eval", {QStringLiteral("class7.csv:3"), QStringLiteral("label 7"), QStringLiteral("0 to 2")}},
        };
        for (const Case& c : cases) {
            const QString path = m_dir.filePath(QLatin1String(c.name));
            writeFile(path, c.text);
            const bool eval = QLatin1String(c.program) == QLatin1String("kiln-eval");
            Run r = run(c.program, eval ? QStringList{m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"), path}
                                        : QStringList{m_project, QStringLiteral("--weights"), m_runDir, path});
            QVERIFY2(r.exitCode == 2, qPrintable(QLatin1String(c.name) + QLatin1Char(' ') + r.err));
            for (const QString& e : c.expected) QVERIFY2(r.err.contains(e), qPrintable(QLatin1String(c.name) + QLatin1Char(' ') + r.err));
        }
    }

private:
    QTemporaryDir m_dir;
    QString m_project;
    QString m_runDir;
    QJsonObject m_testReport;
    QMap<int, Sample> m_test;  // line in table.csv -> kiln-eval's record
    QList<int> m_testLines;    // in line order
};

QTEST_GUILESS_MAIN(TestKilnEvalTableRows)
#include "tst_kiln_eval_table_rows.moc"
