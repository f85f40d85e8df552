// SPDX-License-Identifier: Apache-2.0
// The Evaluate view's samples table for table data (data.format "csv"): each sample shows its
// feature values as the file holds them, not as the model saw them after standardisation. With
// few features, one sortable column per feature (a one-hot column is one feature showing its
// category); with many, one Features column with the first pairs and every value in its tooltip,
// the features in the order of the model's inputs. Every row's values are checked against the
// file's row they came from (each row has a distinct id), whose label must be the record's true
// class, and its source names the file and the line of that row; the CSV export carries the
// same values, and a second opening from the stored results shows them too. TFRecord Examples
// of numbers get their values the same way, and so do other rows of a table given as other data.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDialog>
#include <QHeaderView>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>

#include <cmath>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/data/example.h"
#include "engine/data/tfrecord.h"
#include "engine/io/project.h"
#include "tests/ui/evaluate/evaluate_test_util.h"
#include "ui/evaluate/evaluate_view.h"
#include "ui/evaluate/evaluation_models.h"

using namespace kiln;
using namespace kiln::ui::evaluate;
using nlohmann::json;

namespace {

// One row of a written table: its cells as written, by column.
using Row = QStringList;

// A table with a header: id (distinct, from 100 up), reading (a number), colour (a category), and
// a label that follows the reading. The returned rows are keyed by id.
std::map<int, Row> writeNamedTable(const QString& path) {
    std::map<int, Row> rows;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return rows;
    f.write("id,reading,colour,label\n");
    std::mt19937 gen(11);
    std::normal_distribution<double> noise(0.0, 0.6);
    const char* colours[] = {"red", "green", "blue"};
    for (int i = 0; i < 120; ++i) {
        const int label = i % 3;
        const int id = 100 + i;
        const Row row{QString::number(id), QString::number(label * 2.0 + noise(gen), 'f', 2), QLatin1String(colours[(i / 3) % 3]),
                      QString::number(label)};
        rows[id] = row;
        f.write(row.join(QLatin1Char(',')).toUtf8() + '\n');
    }
    return rows;
}

// Ten numbers without a header, then the label; the first column is a distinct id.
std::map<int, Row> writeWideTable(const QString& path) {
    std::map<int, Row> rows;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return rows;
    std::mt19937 gen(5);
    std::normal_distribution<double> noise(0.0, 1.0);
    for (int i = 0; i < 80; ++i) {
        const int label = i % 2;
        Row row{QString::number(1000 + i)};
        for (int k = 1; k < 10; ++k) row << QString::number(label * 1.5 + noise(gen), 'f', 3);
        row << QString::number(label);
        rows[1000 + i] = row;
        f.write(row.join(QLatin1Char(',')).toUtf8() + '\n');
    }
    return rows;
}

engine::io::Project parse(const json& j, const char* name) {
    auto p = engine::io::parseProject(j.dump(), name);
    if (!p.ok()) qWarning("%s", p.error().toString().c_str());
    return p.ok() ? p.value() : engine::io::Project{};
}

json training() {
    return {{"epochs", 4},
            {"batch_size", 16},
            {"seed", 3},
            {"optimizer", {{"type", "adam"}, {"learning_rate", 0.05}}},
            {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
            {"metrics", {"accuracy"}}};
}

// Chooses Other data in the view's split box and types `file` as its path.
QLineEdit* chooseOtherData(QWidget& view, const QString& file) {
    auto* split = view.findChild<QComboBox*>(QStringLiteral("evalSplit"));
    auto* path = view.findChild<QLineEdit*>(QStringLiteral("evalDataPath"));
    if (!split || !path) return nullptr;
    split->setFocus();
    QTest::keyClick(split, Qt::Key_End);
    QTest::keyClicks(path, file);
    return path;
}

// Reads a CSV file written by the export (no quoted fields in these tables).
QList<QStringList> readCsv(const QString& path) {
    QList<QStringList> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    for (const QString& line : QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        out << line.split(QLatin1Char(','));
    return out;
}

}  // namespace

class TestEvaluateTableFeatures : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    // Shows `view`, trains the project saved in `folder` and evaluates its test split in the view.
    bool trainAndEvaluate(EvaluateView& view, const engine::io::Project& project, const QString& folder, QString* runDir) {
        view.resize(1000, 600);
        view.show();
        if (!QTest::qWaitForWindowExposed(&view)) return false;
        const QString path = QDir(folder).filePath(QStringLiteral("project.kiln"));
        if (!engine::io::saveProject(project, path.toStdString()).ok()) return false;
        *runDir = test::trainRun(project, path, QDir(folder).filePath(QStringLiteral("runs/first")), "first");
        if (runDir->isEmpty()) return false;
        view.setProject(project, path);
        view.setWeights(*runDir);
        return test::evaluateWithClick(view);
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Three features (a number, the id and a category): one column each, named by the header.
    void fewFeaturesGetAColumnEach() {
        const QString folder = m_dir.filePath(QStringLiteral("named"));
        QVERIFY(QDir().mkpath(folder));
        const std::map<int, Row> rows = writeNamedTable(QDir(folder).filePath(QStringLiteral("table.csv")));
        const QString tableFile = QDir(folder).filePath(QStringLiteral("table.csv"));
        QCOMPARE(rows.size(), size_t(120));
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "named"},
            {"graph",
             {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {5}}}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 3}}}}})}}},
            {"data",
             {{"format", "csv"},
              {"path", "table.csv"},
              {"header", true},
              {"label_column", "label"},
              {"categorical_columns", {"colour"}},
              {"standardize", true},
              {"split", {{"validation", 0.25}, {"test", 0.25}}}}},
            {"training", training()}};
        const engine::io::Project project = parse(j, "named.kiln");
        QVERIFY(!project.graph.nodes.empty());

        EvaluateView view;
        QAbstractItemModelTester tester(view.sampleProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QString runDir;
        QVERIFY(trainAndEvaluate(view, project, folder, &runDir));

        SampleTableModel* samples = view.sampleModel();
        QCOMPARE(samples->rowCount(), 30);
        QVERIFY(!samples->compactFeatures());
        QCOMPARE(samples->columnCount(), SampleTableModel::ColumnCount + 3);
        const int id = SampleTableModel::ColumnCount, reading = id + 1, colour = id + 2;
        QCOMPARE(samples->headerData(id, Qt::Horizontal).toString(), QStringLiteral("id"));
        QCOMPARE(samples->headerData(reading, Qt::Horizontal).toString(), QStringLiteral("reading"));
        QCOMPARE(samples->headerData(colour, Qt::Horizontal).toString(), QStringLiteral("colour"));
        // Every row shows the file's values of the row it came from, and that row's label is the
        // record's true class: the values belong to their sample.
        QSet<int> seen;
        for (int r = 0; r < samples->rowCount(); ++r) {
            const QString idText = samples->data(samples->index(r, id)).toString();
            bool ok = false;
            const int key = idText.toInt(&ok);
            QVERIFY2(ok && rows.count(key) == 1, qPrintable(idText));  // 100..219, not standardised
            const Row& file = rows.at(key);
            QCOMPARE(samples->data(samples->index(r, reading)).toString().toFloat(), file[1].toFloat());
            QCOMPARE(samples->data(samples->index(r, colour)).toString(), file[2]);
            QCOMPARE(samples->data(samples->index(r, SampleTableModel::True)).toString(), file[3]);
            // The source is the file and the line of the row (the header is line 1).
            QCOMPARE(samples->data(samples->index(r, SampleTableModel::Source)).toString(),
                     QStringLiteral("%1:%2").arg(tableFile).arg(key - 98));
            QCOMPARE(samples->data(samples->index(r, reading), Qt::ToolTipRole).toString(),
                     QStringLiteral("reading = %1").arg(samples->data(samples->index(r, reading)).toString()));
            seen.insert(key);
        }
        QCOMPARE(seen.size(), 30);

        // A click on a feature's header sorts by its value, as a number.
        auto* table = view.sampleView();
        QHeaderView* header = table->horizontalHeader();
        QVERIFY(!table->isColumnHidden(reading));
        table->scrollTo(view.sampleProxy()->index(0, reading));
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {},
                          QPoint(header->sectionViewportPosition(reading) + header->sectionSize(reading) / 2, header->height() / 2));
        QCOMPARE(header->sortIndicatorSection(), reading);
        QSortFilterProxyModel* proxy = view.sampleProxy();
        const bool ascending = header->sortIndicatorOrder() == Qt::AscendingOrder;
        for (int r = 1; r < proxy->rowCount(); ++r) {
            const float a = proxy->index(r - 1, reading).data().toString().toFloat();
            const float b = proxy->index(r, reading).data().toString().toFloat();
            QVERIFY2(ascending ? a <= b : a >= b, qPrintable(QStringLiteral("%1 then %2").arg(a).arg(b)));
        }

        // A click on the Source header sorts by file line as a number (line 9 before line 10).
        QVERIFY(!table->isColumnHidden(SampleTableModel::Source));
        table->scrollTo(proxy->index(0, SampleTableModel::Source));
        const int source = SampleTableModel::Source;
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {},
                          QPoint(header->sectionViewportPosition(source) + header->sectionSize(source) / 2, header->height() / 2));
        QCOMPARE(header->sortIndicatorSection(), source);
        const bool up = header->sortIndicatorOrder() == Qt::AscendingOrder;
        for (int r = 1; r < proxy->rowCount(); ++r) {
            const int a = proxy->index(r - 1, source).data().toString().section(QLatin1Char(':'), -1).toInt();
            const int b = proxy->index(r, source).data().toString().section(QLatin1Char(':'), -1).toInt();
            QVERIFY2(up ? a < b : a > b, qPrintable(QStringLiteral("line %1 then %2").arg(a).arg(b)));
        }

        // The export writes the table as shown, with the features after kiln-eval's columns.
        const QString csvPath = m_dir.filePath(QStringLiteral("named_samples.csv"));
        QVERIFY(view.exportSamples(csvPath));
        const QList<QStringList> csv = readCsv(csvPath);
        QCOMPARE(csv.size(), 31);
        QCOMPARE(csv[0].join(QLatin1Char(',')), QStringLiteral("index,source,true,predicted,confidence,loss,correct,id,reading,colour"));
        for (int r = 1; r < csv.size(); ++r) {
            QCOMPARE(csv[r].size(), 10);
            const Row& file = rows.at(csv[r][7].toInt());
            QCOMPARE(csv[r][8].toFloat(), file[1].toFloat());
            QCOMPARE(csv[r][9], file[2]);
            QCOMPARE(csv[r][2], file[3]);
            QCOMPARE(csv[r][1], QStringLiteral("%1:%2").arg(tableFile).arg(csv[r][7].toInt() - 98));
            QCOMPARE(csv[r][7], proxy->index(r - 1, id).data().toString());  // the order shown
        }

        // Opened again: the stored results, with the features read again from the file.
        EvaluateView again;
        again.resize(1000, 600);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        again.setProject(project, QDir(folder).filePath(QStringLiteral("project.kiln")));
        again.setWeights(runDir);
        QVERIFY(test::evaluateWithClick(again));
        QVERIFY(again.shownFromCache());
        QCOMPARE(again.sampleModel()->columnCount(), SampleTableModel::ColumnCount + 3);
        for (int r = 0; r < again.sampleModel()->rowCount(); ++r) {
            const Row& file = rows.at(again.sampleModel()->data(again.sampleModel()->index(r, id)).toInt());
            QCOMPARE(again.sampleModel()->data(again.sampleModel()->index(r, SampleTableModel::True)).toString(), file[3]);
            QCOMPARE(again.sampleModel()->data(again.sampleModel()->index(r, SampleTableModel::Source)).toString(),
                     QStringLiteral("%1:%2").arg(tableFile).arg(file[0].toInt() - 98));
        }
    }

    // Other data of a table project: a CSV file of rows (columns in another order) is evaluated
    // as typed under Other data, each sample showing its own row's values and named by the file
    // and line; a row whose category the table does not have is refused, naming file, line and
    // column, the value and the known categories.
    void otherRowsShowTheirFeatures() {
        const QString folder = m_dir.filePath(QStringLiteral("rows"));
        QVERIFY(QDir().mkpath(folder));
        const std::map<int, Row> rows = writeNamedTable(QDir(folder).filePath(QStringLiteral("table.csv")));
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "rows"},
            {"graph",
             {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {5}}}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 3}}}}})}}},
            {"data",
             {{"format", "csv"},
              {"path", "table.csv"},
              {"header", true},
              {"label_column", "label"},
              {"categorical_columns", {"colour"}},
              {"standardize", true},
              {"split", {{"test", 0.25}}}}},
            {"training", training()}};
        const engine::io::Project project = parse(j, "rows.kiln");
        QVERIFY(!project.graph.nodes.empty());
        EvaluateView view;
        QString runDir;
        QVERIFY(trainAndEvaluate(view, project, folder, &runDir));

        // Seven rows of the table, the columns in another order.
        const QString other = QDir(folder).filePath(QStringLiteral("new_rows.csv"));
        QByteArray text = "label,colour,id,reading\n";
        for (int id = 150; id < 157; ++id) {
            const Row& r = rows.at(id);
            text += (QStringList{r[3], r[2], r[0], r[1]}.join(QLatin1Char(',')) + QLatin1Char('\n')).toUtf8();
        }
        {
            QFile f(other);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text);
        }
        QLineEdit* path = chooseOtherData(view, other);
        QVERIFY(path);
        QString error;
        QVERIFY2(test::evaluateWithClick(view, &error), qPrintable(error));
        SampleTableModel* samples = view.sampleModel();
        QCOMPARE(samples->rowCount(), 7);
        const int id = SampleTableModel::ColumnCount, reading = id + 1, colour = id + 2;
        QCOMPARE(samples->headerData(colour, Qt::Horizontal).toString(), QStringLiteral("colour"));
        for (int r = 0; r < samples->rowCount(); ++r) {
            const int key = samples->data(samples->index(r, id)).toString().toInt();
            QVERIFY2(key >= 150 && key < 157, qPrintable(QString::number(key)));
            const Row& file = rows.at(key);
            QCOMPARE(samples->data(samples->index(r, reading)).toString().toFloat(), file[1].toFloat());
            QCOMPARE(samples->data(samples->index(r, colour)).toString(), file[2]);
            QCOMPARE(samples->data(samples->index(r, SampleTableModel::True)).toString(), file[3]);
            QCOMPARE(samples->data(samples->index(r, SampleTableModel::Source)).toString(), QStringLiteral("%1:%2").arg(other).arg(key - 148));
        }

        const QString purple = QDir(folder).filePath(QStringLiteral("purple.csv"));
        {
            QFile f(purple);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("id,reading,colour,label\n1,0.5,red,0\n2,1.5,purple,1\n");
        }
        path->clear();
        QTest::keyClicks(path, purple);
        QVERIFY(!test::evaluateWithClick(view, &error));
        QVERIFY2(error.contains(purple + QStringLiteral(":3:3")) && error.contains(QStringLiteral("\"purple\"")) &&
                     error.contains(QStringLiteral("blue, green, red")),
                 qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 0);
    }

    // Ten features over two inputs: one Features column, in the order of the model's inputs (the
    // first Input reads the file's columns 6-10), every value in the tooltip and the export.
    void manyFeaturesShareOneColumn() {
        const QString folder = m_dir.filePath(QStringLiteral("wide"));
        QVERIFY(QDir().mkpath(folder));
        const std::map<int, Row> rows = writeWideTable(QDir(folder).filePath(QStringLiteral("table.csv")));
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "wide"},
            {"graph",
             {{"nodes", json::array({{{"name", "late"}, {"op", "Input"}, {"attrs", {{"shape", {5}}}}},
                                     {{"name", "early"}, {"op", "Input"}, {"attrs", {{"shape", {5}}}}},
                                     {{"name", "both"}, {"op", "Concatenate"}, {"inputs", {"late", "early"}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"both"}}, {"attrs", {{"units", 2}}}}})},
              {"outputs", {"logits"}}}},
            {"data",
             {{"format", "csv"},
              {"path", "table.csv"},
              {"columns", {{"a_first_five", {0, 5}}, {"b_last_five", {5, 10}}}},
              {"inputs", {{"late", "b_last_five"}, {"early", "a_first_five"}}},
              {"standardize", true},
              {"split", {{"test", 0.25}}}}},
            {"training", training()}};
        const engine::io::Project project = parse(j, "wide.kiln");
        QVERIFY(!project.graph.nodes.empty());

        EvaluateView view;
        QString runDir;
        QVERIFY(trainAndEvaluate(view, project, folder, &runDir));

        SampleTableModel* samples = view.sampleModel();
        QCOMPARE(samples->rowCount(), 20);
        QVERIFY(samples->compactFeatures());
        const int features = SampleTableModel::ColumnCount;
        QCOMPARE(samples->columnCount(), features + 1);
        QCOMPARE(samples->headerData(features, Qt::Horizontal).toString(), QStringLiteral("Features"));
        for (int r = 0; r < samples->rowCount(); ++r) {
            const QStringList lines = samples->data(samples->index(r, features), Qt::ToolTipRole).toString().split(QLatin1Char('\n'));
            QCOMPARE(lines.size(), 10);
            // "column 6 = …" first: the first Input reads the last five columns.
            QVERIFY2(lines[0].startsWith(QStringLiteral("column 6 = ")), qPrintable(lines[0]));
            QVERIFY2(lines[5].startsWith(QStringLiteral("column 1 = ")), qPrintable(lines[5]));
            const int key = lines[5].section(QStringLiteral(" = "), 1).toInt();
            QVERIFY2(rows.count(key) == 1, qPrintable(lines[5]));
            const Row& file = rows.at(key);
            for (int k = 0; k < 10; ++k) {
                const int column = k < 5 ? k + 5 : k - 5;
                QCOMPARE(lines[k], QStringLiteral("column %1 = %2").arg(column + 1).arg(lines[k].section(QStringLiteral(" = "), 1)));
                QCOMPARE(lines[k].section(QStringLiteral(" = "), 1).toFloat(), file[column].toFloat());
            }
            QCOMPARE(samples->data(samples->index(r, SampleTableModel::True)).toString(), file[10]);
            // The cell: the first four pairs, then an ellipsis.
            const QString shown = samples->data(samples->index(r, features)).toString();
            QVERIFY2(shown.startsWith(QStringLiteral("column 6=")) && shown.endsWith(QStringLiteral(", …")), qPrintable(shown));
            QCOMPARE(shown.count(QLatin1Char('=')), 4);
        }
        const QString csvPath = m_dir.filePath(QStringLiteral("wide_samples.csv"));
        QVERIFY(view.exportSamples(csvPath));
        const QList<QStringList> csv = readCsv(csvPath);
        QCOMPARE(csv.size(), 21);
        QCOMPARE(csv[0].mid(7), (QStringList{QStringLiteral("column 6"), QStringLiteral("column 7"), QStringLiteral("column 8"),
                                             QStringLiteral("column 9"), QStringLiteral("column 10"), QStringLiteral("column 1"),
                                             QStringLiteral("column 2"), QStringLiteral("column 3"), QStringLiteral("column 4"),
                                             QStringLiteral("column 5")}));
        for (int r = 1; r < csv.size(); ++r) {
            const Row& file = rows.at(csv[r][12].toInt());
            for (int k = 0; k < 10; ++k) QCOMPARE(csv[r][7 + k].toFloat(), file[k < 5 ? k + 5 : k - 5].toFloat());
        }
    }

    // TFRecord Examples of numbers are a table too: a float vector `x` (its first element the
    // record's distinct id) gets one column per element, "x[0]" to "x[2]", holding the file's
    // values (not standardised); each row's id tells its label, the record's true class.
    void tfrecordNumbersGetFeatureColumns() {
        const QString folder = m_dir.filePath(QStringLiteral("records"));
        QVERIFY(QDir().mkpath(folder));
        auto writeRecords = [&](const QString& name, int first, int count) {
            auto writer = engine::data::TfRecordWriter::create(QDir(folder).filePath(name).toStdString());
            QVERIFY2(writer.ok(), writer.ok() ? "" : writer.error().toString().c_str());
            for (int i = first; i < first + count; ++i) {
                engine::data::Example e;
                e.features["x"] = engine::data::Feature::ofFloats({float(i), float(i % 3) * 1.5f + 0.1f * float(i % 4), 0.5f * float(i)});
                e.features["label"] = engine::data::Feature::ofInt64s({i % 3});
                QVERIFY((*writer)->write(engine::data::encodeExample(e)).ok());
            }
            QVERIFY((*writer)->close().ok());
        };
        writeRecords(QStringLiteral("train.tfrecord"), 300, 60);
        writeRecords(QStringLiteral("test.tfrecord"), 400, 18);
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "records"},
            {"graph",
             {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {3}}}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 3}}}}})}}},
            {"data",
             {{"format", "tfrecord"},
              {"train", "train.tfrecord"},
              {"test", "test.tfrecord"},
              {"features", {{"x", {{"type", "float"}, {"shape", {3}}}}, {"label", {{"type", "int64"}, {"shape", json::array()}}}}},
              {"transforms", json::array({{{"type", "standardize"}, {"column", "x"}}})}}},
            {"training", training()}};
        const engine::io::Project project = parse(j, "records.kiln");
        QVERIFY(!project.graph.nodes.empty());

        EvaluateView view;
        QString runDir;
        QVERIFY(trainAndEvaluate(view, project, folder, &runDir));

        SampleTableModel* samples = view.sampleModel();
        QCOMPARE(samples->rowCount(), 18);
        QVERIFY(!samples->compactFeatures());
        QCOMPARE(samples->columnCount(), SampleTableModel::ColumnCount + 3);
        const int first = SampleTableModel::ColumnCount;
        for (int k = 0; k < 3; ++k)
            QCOMPARE(samples->headerData(first + k, Qt::Horizontal).toString(), QStringLiteral("x[%1]").arg(k));
        QSet<int> ids;
        for (int r = 0; r < samples->rowCount(); ++r) {
            bool ok = false;
            const int id = samples->data(samples->index(r, first)).toString().toInt(&ok);
            QVERIFY2(ok && id >= 400 && id < 418, qPrintable(samples->data(samples->index(r, first)).toString()));
            QCOMPARE(samples->data(samples->index(r, first + 1)).toString().toFloat(), float(id % 3) * 1.5f + 0.1f * float(id % 4));
            QCOMPARE(samples->data(samples->index(r, first + 2)).toString().toFloat(), 0.5f * float(id));
            QCOMPARE(samples->data(samples->index(r, SampleTableModel::True)).toString(), QString::number(id % 3));
            QVERIFY(samples->data(samples->index(r, SampleTableModel::Source)).toString().contains(QStringLiteral("test.tfrecord@")));
            ids.insert(id);
        }
        QCOMPARE(ids.size(), 18);
    }
};

QTEST_MAIN(TestEvaluateTableFeatures)
#include "tst_evaluate_table_features.moc"
