// SPDX-License-Identifier: Apache-2.0
// The Export overlays dialog on its own, driven with real input events: for the convolutional
// Fashion-MNIST example it proposes Grad-CAM at the last convolution, lists the classes after
// "Predicted class", and what is chosen with the keyboard and the mouse (method, layer, class,
// opacity, folder) is what settings() gives; saliency needs no layer; without a folder Export is
// off. For the MLP example, which has no convolution, it starts on saliency and cannot export
// Grad-CAM, the layer's tooltip saying why. The documentation's pictures come from the
// screenshot slot: tools/overlay_export_screenshot.sh runs it in a real X window under Xvfb with
// KILN_SCREENSHOT_DIR set, and it saves overlay_export_dialog_<en|zh_CN>.png there (skipped
// without it).
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_evaluate
#include <QtTest>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QScreen>
#include <QSlider>

#include <string>
#include <vector>

#include "engine/io/project.h"
#include "ui/common/language.h"
#include "ui/evaluate/overlay_export_dialog.h"

using namespace kiln;
using kiln::ui::evaluate::OverlayExportDialog;

namespace {

engine::io::Project example(const char* name) {
    auto p = engine::io::loadProject(std::string(KILN_SOURCE_DIR "/resources/examples/") + name);
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return *p;
}

std::vector<std::string> classNamesOf(const engine::io::Project& project) {
    std::vector<std::string> out;
    for (const auto& n : project.data.at("class_names")) out.push_back(n.get<std::string>());
    return out;
}

// Picks `text` in a combo box the way a user does with the keyboard: focus, then Down until it
// is current.
void chooseWithKeys(QComboBox* box, const QString& text) {
    box->setFocus();
    QTest::keyClick(box, Qt::Key_Home);
    for (int i = 0; i < box->count() && box->currentText() != text; ++i) QTest::keyClick(box, Qt::Key_Down);
}

}  // namespace

class TestOverlayExportDialog : public QObject {
    Q_OBJECT

private slots:
    void choicesFromInputEvents() {
        const auto project = example("fashion_cnn.kiln");
        const auto classes = classNamesOf(project);
        OverlayExportDialog dialog(project, classes, 12, QStringLiteral("/tmp/overlays"));
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* method = dialog.findChild<QComboBox*>(QStringLiteral("exportMethod"));
        auto* layer = dialog.findChild<QComboBox*>(QStringLiteral("exportLayer"));
        auto* cls = dialog.findChild<QComboBox*>(QStringLiteral("exportClass"));
        auto* opacity = dialog.findChild<QSlider*>(QStringLiteral("exportOpacity"));
        auto* folder = dialog.findChild<QLineEdit*>(QStringLiteral("exportFolder"));
        auto* start = dialog.findChild<QPushButton*>(QStringLiteral("exportStart"));
        QVERIFY(method && layer && cls && opacity && folder && start);

        // Proposed: Grad-CAM at the last convolution, the predicted class, opacity 0.5.
        QCOMPARE(method->currentText(), QStringLiteral("Grad-CAM"));
        QCOMPARE(layer->currentText(), QStringLiteral("conv2"));
        QVERIFY(layer->isEnabled());
        QVERIFY(layer->findText(QStringLiteral("conv1")) >= 0);
        QCOMPARE(cls->count(), int(classes.size()) + 1);
        QCOMPARE(cls->currentText(), QStringLiteral("Predicted class"));
        QCOMPARE(cls->itemText(2), QStringLiteral("Trouser (1)"));
        bool intro = false;
        for (const QLabel* l : dialog.findChildren<QLabel*>()) intro = intro || l->text().startsWith(QStringLiteral("Explain 12 sample(s) "));
        QVERIFY(intro);
        QVERIFY(start->isEnabled());
        auto s = dialog.settings();
        QCOMPARE(s.method, engine::api::ExplainMethod::GradCam);
        QCOMPARE(s.layer, std::string("conv2"));
        QVERIFY(!s.cls.has_value());
        QCOMPARE(s.opacity, 0.5f);

        // Another layer and class with the keyboard, the opacity with the keyboard and the mouse.
        chooseWithKeys(layer, QStringLiteral("conv1"));
        chooseWithKeys(cls, QStringLiteral("Trouser (1)"));
        opacity->setFocus();
        QTest::keyClick(opacity, Qt::Key_PageUp);
        QCOMPARE(opacity->value(), 60);
        bool shown = false;
        for (const QLabel* l : dialog.findChildren<QLabel*>()) shown = shown || l->text() == QStringLiteral("0.60");
        QVERIFY(shown);
        QTest::mouseClick(opacity, Qt::LeftButton, {}, QPoint(2, opacity->height() / 2));
        QVERIFY(opacity->value() < 60);
        QTest::keyClick(opacity, Qt::Key_End);
        QCOMPARE(opacity->value(), 100);
        s = dialog.settings();
        QCOMPARE(s.layer, std::string("conv1"));
        QCOMPARE(s.cls, std::optional<int64_t>(1));
        QCOMPARE(s.opacity, 1.0f);

        // Saliency uses no layer.
        chooseWithKeys(method, QStringLiteral("Saliency (input gradient)"));
        QVERIFY(!layer->isEnabled());
        QCOMPARE(dialog.settings().method, engine::api::ExplainMethod::Saliency);
        QVERIFY(dialog.settings().layer.empty());

        // No folder, no export; a typed one is taken as typed.
        folder->setFocus();
        folder->selectAll();
        QTest::keyClick(folder, Qt::Key_Delete);
        QVERIFY(!start->isEnabled());
        QTest::keyClicks(folder, QStringLiteral("/tmp/other overlays"));
        QVERIFY(start->isEnabled());
        QCOMPARE(dialog.folder(), QStringLiteral("/tmp/other overlays"));
        QCOMPARE(dialog.settings().folder, std::string("/tmp/other overlays"));
        QTest::mouseClick(start, Qt::LeftButton);
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
    }

    void modelWithoutConvolutionStartsOnSaliency() {
        const auto project = example("fashion_mlp.kiln");
        OverlayExportDialog dialog(project, classNamesOf(project), 3, QStringLiteral("/tmp/overlays"));
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* method = dialog.findChild<QComboBox*>(QStringLiteral("exportMethod"));
        auto* layer = dialog.findChild<QComboBox*>(QStringLiteral("exportLayer"));
        auto* start = dialog.findChild<QPushButton*>(QStringLiteral("exportStart"));
        QCOMPARE(method->currentText(), QStringLiteral("Saliency (input gradient)"));
        QVERIFY(!layer->isEnabled());
        QVERIFY(start->isEnabled());
        QVERIFY2(layer->toolTip().startsWith(QStringLiteral("Grad-CAM cannot be used: ")), qPrintable(layer->toolTip()));
        chooseWithKeys(method, QStringLiteral("Grad-CAM"));
        QCOMPARE(method->currentText(), QStringLiteral("Grad-CAM"));
        QVERIFY(!layer->isEnabled());
        QVERIFY(!start->isEnabled());
        QTest::mouseClick(dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel), Qt::LeftButton);
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
    }

    // docs/evaluate.md's pictures: the dialog for twelve samples of fashion_cnn.kiln as the
    // Evaluate view opens it (Grad-CAM at conv2, the predicted class, opacity 0.5, the folder
    // proposed beside the project), in English and Simplified Chinese, grabbed from the screen.
    void screenshot() {
        const QString dir = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("takes the documentation's screenshots when KILN_SCREENSHOT_DIR names the folder");
        const auto project = example("fashion_cnn.kiln");
        for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            QVERIFY(ui::Language::apply(lang));
            OverlayExportDialog dialog(project, classNamesOf(project), 12, QStringLiteral("/home/user/fashion/overlays"));
            dialog.resize(560, dialog.sizeHint().height());
            dialog.show();
            QVERIFY(QTest::qWaitForWindowExposed(&dialog));
            QTest::qWait(300);
            const QPixmap shot = dialog.screen()->grabWindow(dialog.winId());
            QVERIFY(!shot.isNull());
            QVERIFY(shot.save(QDir(dir).filePath(QStringLiteral("overlay_export_dialog_%1.png").arg(lang))));
            dialog.reject();
        }
        QVERIFY(ui::Language::apply(QStringLiteral("en")));
    }
};

QTEST_MAIN(TestOverlayExportDialog)
#include "tst_overlay_export_dialog.moc"
