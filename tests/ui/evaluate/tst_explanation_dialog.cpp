// SPDX-License-Identifier: Apache-2.0
// Grad-CAM from the Evaluate view, driven with real input events: a small convolutional project of
// pictures is trained in process and evaluated; a double click on a sample row opens the
// explanation dialog, which computes its overlay off the GUI thread; the class and method are
// changed with the keyboard, the opacity with the slider, and the context menu opens the dialog too.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QComboBox>
#include <QContextMenuEvent>
#include <QMenu>
#include <QPushButton>
#include <QSlider>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "engine/api/training_job.h"
#include "engine/io/project.h"
#include "ui/evaluate/evaluate_view.h"
#include "ui/evaluate/explanation_dialog.h"

using namespace kiln;
using namespace kiln::ui::evaluate;
using nlohmann::json;

namespace {

// An 8x8 24-bit BMP, bright on the left or the right half.
QByteArray halfBmp(bool left, int seed) {
    QByteArray b(54 + 8 * 8 * 3, '\0');
    auto put32 = [&](int at, quint32 v) {
        for (int k = 0; k < 4; ++k) b[at + k] = char((v >> (8 * k)) & 0xff);
    };
    b[0] = 'B';
    b[1] = 'M';
    put32(2, quint32(b.size()));
    put32(10, 54);
    put32(14, 40);
    put32(18, 8);
    put32(22, 8);
    b[26] = 1;
    b[28] = 24;
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
            const int v = ((x < 4) == left ? 210 : 40) + ((x * 7 + y * 13 + seed * 5) % 21) - 10;
            for (int k = 0; k < 3; ++k) b[54 + (y * 8 + x) * 3 + k] = char(v);
        }
    return b;
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

}  // namespace

class TestExplanationDialog : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    engine::io::Project m_project;
    QString m_projectPath;
    QString m_runDir;

    ExplanationDialog* waitForDialog(EvaluateView& view) {
        if (!QTest::qWaitFor([&] { return view.explanationDialog() != nullptr; }, 5000)) return nullptr;
        ExplanationDialog* d = view.explanationDialog();
        if (!QTest::qWaitFor([&] { return !d->busy() && (!d->heatmap().values.empty() || !d->errorText().isEmpty()); }, 60000))
            return nullptr;
        return d;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        for (const char* split : {"train", "test"})
            for (int c = 0; c < 2; ++c)
                for (int i = 0; i < (split[1] == 'r' ? 16 : 3); ++i)
                    writeFile(m_dir.filePath(QStringLiteral("pics/%1/%2/%3.bmp").arg(QLatin1String(split), c == 0 ? QStringLiteral("left") : QStringLiteral("right")).arg(i)),
                              halfBmp(c == 0, i + (split[1] == 'e' ? 30 : 0)));
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "halves"},
            {"graph",
             {{"nodes", json::array({{{"name", "image"}, {"op", "Input"}, {"attrs", {{"shape", {8, 8, 3}}}}},
                                     {{"name", "conv"}, {"op", "Conv2D"}, {"inputs", {"image"}},
                                      {"attrs", {{"filters", 4}, {"kernel_size", 3}, {"padding", "same"}, {"activation", "relu"}}}},
                                     {{"name", "pool"}, {"op", "MaxPooling2D"}, {"inputs", {"conv"}}},
                                     {{"name", "flat"}, {"op", "Flatten"}, {"inputs", {"pool"}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"flat"}}, {"attrs", {{"units", 2}}}}})}}},
            {"data", {{"format", "folder"}, {"path", "pics"}, {"workers", 1}, {"transforms", json::array({{{"type", "normalize"}, {"preset", "symmetric"}}})}}},
            {"training",
             {{"epochs", 3},
              {"batch_size", 8},
              {"seed", 3},
              {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
              {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}}}}};
        auto p = engine::io::parseProject(j.dump(), "halves.kiln");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        m_project = p.value();
        m_projectPath = m_dir.filePath(QStringLiteral("halves.kiln"));
        QVERIFY(engine::io::saveProject(m_project, m_projectPath.toStdString()).ok());
        engine::api::TrainingOptions options;
        options.runDir = m_dir.filePath(QStringLiteral("runs/first")).toStdString();
        options.runName = "first";
        options.recordRun = false;
        auto job = engine::api::TrainingJob::prepare(m_project, m_projectPath.toStdString(), options);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().message.c_str());
        auto outcome = (*job)->run({});
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());
        m_runDir = QString::fromStdString(outcome->runDir);
    }

    void explainsARowWithEvents() {
        EvaluateView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(m_project, m_projectPath);
        view.setWeights(m_runDir);
        QSignalSpy finished(&view, &EvaluateView::finished);
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        auto* tabs = view.findChild<QTabWidget*>();
        QVERIFY(tabs);
        tabs->setCurrentWidget(view.sampleView());
        QTableView* table = view.sampleView();
        QTRY_VERIFY(table->isVisible());
        QCOMPARE(table->model()->rowCount(), 6);
        const QRect cell = table->visualRect(table->model()->index(0, 1));
        QSignalSpy doubleClicked(table, &QTableView::doubleClicked);
        // A click selects the row (the view remembers the pressed cell), the double click opens it.
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(doubleClicked.count(), 1);
        ExplanationDialog* d = waitForDialog(view);
        QVERIFY(d);
        QVERIFY2(d->errorText().isEmpty(), qPrintable(d->errorText()));
        QVERIFY(d->isVisible());
        QCOMPARE(d->heatmap().height, int64_t(8));
        QCOMPARE(d->heatmap().explainedClass, d->heatmap().predictedClass);
        QCOMPARE(d->overlay().size(), QSize(256, 256));  // 8x8 shown 32 times larger
        auto* layer = d->findChild<QComboBox*>(QStringLiteral("explainLayer"));
        QVERIFY(layer);
        QCOMPARE(layer->currentText(), QStringLiteral("conv"));
        QVERIFY(layer->findText(QStringLiteral("pool")) >= 0);

        // Class "right" (index 2 of the chooser: predicted, left, right) with the keyboard.
        auto* cls = d->findChild<QComboBox*>(QStringLiteral("explainClass"));
        QSignalSpy explained(d, &ExplanationDialog::explained);
        cls->setFocus();
        QTest::keyClick(cls, Qt::Key_Down);
        QTest::keyClick(cls, Qt::Key_Down);
        QCOMPARE(cls->currentIndex(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(!d->busy() && explained.count() >= 1 && d->heatmap().explainedClass == 1, 30000);

        // Saliency, then a stronger overlay with the slider: the picture changes, no recomputation.
        auto* method = d->findChild<QComboBox*>(QStringLiteral("explainMethod"));
        int seen = int(explained.count());
        method->setFocus();
        QTest::keyClick(method, Qt::Key_Down);
        QVERIFY(!layer->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!d->busy() && explained.count() > seen, 30000);
        QVERIFY(d->heatmap().scale > 0);
        QCOMPARE(d->heatmap().layerHeight, int64_t(0));
        const QImage before = d->overlay();
        seen = int(explained.count());
        auto* opacity = d->findChild<QSlider*>(QStringLiteral("explainOpacity"));
        opacity->setFocus();
        QTest::keyClick(opacity, Qt::Key_PageUp);
        QCOMPARE(opacity->value(), 60);
        QVERIFY(d->overlay() != before);
        QCOMPARE(int(explained.count()), seen);

        // Back to Grad-CAM, at the pooling layer (4x4).
        method->setFocus();
        QTest::keyClick(method, Qt::Key_Up);
        layer->setFocus();
        QTest::keyClick(layer, Qt::Key_Down);
        QCOMPARE(layer->currentText(), QStringLiteral("pool"));
        QTRY_VERIFY_WITH_TIMEOUT(!d->busy() && explained.count() > seen && d->heatmap().layerHeight == 4, 30000);
        d->close();
        QTRY_VERIFY(view.explanationDialog() == nullptr);

        // The context menu of a row.
        const QRect second = table->visualRect(table->model()->index(1, 1));
        QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, second.center(), table->viewport()->mapToGlobal(second.center()));
        QApplication::sendEvent(table->viewport(), &menuEvent);
        QMenu* menu = nullptr;
        QTRY_VERIFY((menu = qobject_cast<QMenu*>(QApplication::activePopupWidget())) != nullptr);
        QCOMPARE(menu->objectName(), QStringLiteral("sampleMenu"));
        QTest::keyClick(menu, Qt::Key_Down);
        QTest::keyClick(menu, Qt::Key_Return);
        ExplanationDialog* d2 = waitForDialog(view);
        QVERIFY(d2);
        QVERIFY2(d2->errorText().isEmpty(), qPrintable(d2->errorText()));
        d2->close();
    }
};

QTEST_MAIN(TestExplanationDialog)
#include "tst_explanation_dialog.moc"
