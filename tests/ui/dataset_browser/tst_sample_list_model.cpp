// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_dataset_browser
// kiln-test-timeout: 600
// SPDX-License-Identifier: Apache-2.0
// The sample model at scale: a 100,000-row index (rows written straight into the index, no
// pictures) shown in the dataset browser's grid, scrolled to the middle and the end; every visible
// cell shows its own row, deep pages are read from anchors, and rows another connection adds show
// after a refresh.
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QListView>
#include <QScrollBar>

#include <set>

#include "engine/data/dataset_index.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/dataset_browser/sample_list_model.h"

using namespace kiln;
using namespace kiln::ui;
using engine::data::DatasetIndex;
using engine::data::SampleRecord;
using engine::data::SampleSplit;

namespace {

constexpr int kRows = 100000;
constexpr int kClasses = 10;

// Sample i: class i / 10,000, path class_CC/img_IIIIII.png, so (label, path) order is i order and
// row r of the unfiltered grid is sample r. Every third sample is in the validation split.
SampleRecord sampleAt(int i) {
    SampleRecord r;
    r.label = i / (kRows / kClasses);
    r.className = QStringLiteral("class_%1").arg(r.label, 2, 10, QLatin1Char('0')).toStdString();
    r.path = QStringLiteral("%1/img_%2.png")
                 .arg(QString::fromStdString(r.className))
                 .arg(i, 6, 10, QLatin1Char('0'))
                 .toStdString();
    r.byteSize = 100 + i;
    r.width = 32;
    r.height = 32;
    r.split = i % 3 == 0 ? SampleSplit::Validation : SampleSplit::Train;
    return r;
}

// The rows whose cells cover the viewport, found by hit-testing every half cell.
std::set<int> visibleRows(QListView* view) {
    std::set<int> rows;
    const QSize cell = view->gridSize().isValid() ? view->gridSize() : QSize(64, 64);
    const QRect area = view->viewport()->rect();
    for (int y = area.top() + 1; y < area.bottom(); y += std::max(1, cell.height() / 2))
        for (int x = area.left() + 1; x < area.right(); x += std::max(1, cell.width() / 2)) {
            const QModelIndex i = view->indexAt(QPoint(x, y));
            if (i.isValid()) rows.insert(i.row());
        }
    return rows;
}

}  // namespace

class TestSampleListModel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    QString m_index;

    // Scrolls `view` to `value` and waits until cells are there (empty when none came).
    static std::set<int> scrollTo(QListView* view, int value) {
        view->verticalScrollBar()->setValue(value);
        QTest::qWait(50);
        std::set<int> rows;
        QDeadlineTimer deadline(20000);
        while ((rows = visibleRows(view)).empty() && !deadline.hasExpired()) QTest::qWait(20);
        return rows;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        m_index = m_tmp.filePath(QStringLiteral("synthetic.kindex"));
        auto index = DatasetIndex::open(m_index.toStdString());
        QVERIFY(index.ok());
        std::vector<SampleRecord> rows;
        for (int i = 0; i < kRows; ++i) rows.push_back(sampleAt(i));
        QVERIFY(index->insertRecords(rows).ok());
        QCOMPARE(*index->count(), int64_t{kRows});
    }

    void modelOverSyntheticIndex() {
        SampleListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setIndexPath(m_index));
        QCOMPARE(model.rowCount(), kRows);
        QTRY_VERIFY_WITH_TIMEOUT(model.anchorsReady(), 30000);
        // With the anchors recorded, rows anywhere read without walking the index again.
        const int64_t walked = model.datasetIndex()->pagingStats().anchorRowsWalked;
        QVERIFY2(walked >= kRows - 1, std::to_string(walked).c_str());
        for (int row : {kRows - 1, 0, kRows / 2, 77777, kRows - 256, 256, 255}) {
            const auto rec = model.record(row);
            QVERIFY(rec.has_value());
            QCOMPARE(rec->path, sampleAt(row).path);
            QCOMPARE(model.rowOfId(rec->id), row);
        }
        QCOMPARE(model.datasetIndex()->pagingStats().anchorRowsWalked, walked);
        QVERIFY(!model.record(kRows).has_value());

        // A filter: the validation rows are samples 0, 3, 6, ...
        model.setFilter({std::nullopt, engine::api::SampleSplit::Validation, std::nullopt});
        QCOMPARE(model.rowCount(), (kRows + 2) / 3);
        QTRY_VERIFY_WITH_TIMEOUT(model.anchorsReady(), 30000);
        for (int row : {model.rowCount() - 1, 0, 12345, model.rowCount() / 2})
            QCOMPARE(model.data(model.index(row), SampleListModel::RelativePathRole).toString().toStdString(),
                     sampleAt(row * 3).path);
    }

    void scrollToTheEndShowsEveryRow() {
        DatasetBrowserWidget w;
        w.resize(1280, 860);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        SampleListModel* model = w.model();
        QVERIFY(model->setIndexPath(m_index));
        QCOMPARE(model->rowCount(), kRows);
        QListView* view = w.view();
        QScrollBar* bar = view->verticalScrollBar();
        QTRY_VERIFY_WITH_TIMEOUT(bar->maximum() > 0, 60000);
        // The grid lays itself out in batches; the end exists once the last row has a place.
        QTRY_VERIFY_WITH_TIMEOUT(view->visualRect(model->index(kRows - 1)).isValid(), 120000);
        QTRY_VERIFY_WITH_TIMEOUT(model->anchorsReady(), 30000);
        const int64_t walked = model->datasetIndex()->pagingStats().anchorRowsWalked;

        auto check = [&](const std::set<int>& rows, auto expectedPath) {
            for (int row : rows) {
                const QModelIndex i = model->index(row);
                const QString shown = model->data(i, SampleListModel::RelativePathRole).toString();
                QCOMPARE(shown.toStdString(), expectedPath(row));
                QCOMPARE(model->data(i, Qt::DisplayRole).toString(), QFileInfo(shown).fileName());
                QCOMPARE(model->rowOfId(model->data(i, SampleListModel::IdRole).toLongLong()), row);
            }
        };
        const auto original = [](int row) { return sampleAt(row).path; };

        std::set<int> rows = scrollTo(view, bar->maximum() / 2);
        QVERIFY(!rows.empty());
        QVERIFY(*rows.begin() > kRows / 4 && *rows.rbegin() < kRows * 3 / 4);
        check(rows, original);
        rows = scrollTo(view, bar->maximum());
        QVERIFY2(rows.count(kRows - 1) == 1, qPrintable(QString::number(*rows.rbegin())));
        QVERIFY(rows.size() > 20);
        check(rows, original);
        // Reading the middle and the end walked no index rows: both pages started at anchors.
        QCOMPARE(model->datasetIndex()->pagingStats().anchorRowsWalked, walked);

        // Another connection (as the scan job's) adds 500 rows that sort first in class 0: every
        // row moves by 500, and the model's anchors must not point at the old rows.
        {
            auto writer = DatasetIndex::open(m_index.toStdString());
            QVERIFY(writer.ok());
            std::vector<SampleRecord> added;
            for (int k = 0; k < 500; ++k) {
                SampleRecord r = sampleAt(0);
                r.path = QStringLiteral("class_00/a_%1.png").arg(k, 3, 10, QLatin1Char('0')).toStdString();
                added.push_back(r);
            }
            QVERIFY(writer->insertRecords(added).ok());
        }
        model->refresh();
        QCOMPARE(model->rowCount(), kRows + 500);
        QTRY_VERIFY_WITH_TIMEOUT(view->visualRect(model->index(kRows + 499)).isValid(), 120000);
        const auto shifted = [](int row) {
            return row < 500
                       ? QStringLiteral("class_00/a_%1.png").arg(row, 3, 10, QLatin1Char('0')).toStdString()
                       : sampleAt(row - 500).path;
        };
        rows = scrollTo(view, bar->maximum());
        QVERIFY(rows.count(kRows + 499) == 1);
        check(rows, shifted);
        rows = scrollTo(view, 0);
        QVERIFY(rows.count(0) == 1);
        check(rows, shifted);
        QVERIFY(model->datasetIndex()->pagingStats().anchorResets >= 1);
    }
};

QTEST_MAIN(TestSampleListModel)
#include "tst_sample_list_model.moc"
