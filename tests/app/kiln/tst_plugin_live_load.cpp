// SPDX-License-Identifier: Apache-2.0
// A plugin loaded while the studio runs is usable at once: a project whose Plugin node names
// example.GroupNorm opens with that plugin missing (the node has no shape); Help > Plugins… >
// Load Plugin…, driven through its file dialog, loads the example plugins (KILN_TEST_PLUGIN_DIR);
// then the node gets its shape, the palette lists the operation under "Plugins", a click selects
// it there and dropping it on the canvas adds a Plugin node whose inspector form is the plugin's
// schema; connected to the input, the new node's shape follows; the training form offers the
// plugin's loss and metric. No restart, no polling.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeView>

#include <memory>

#include "app/kiln/main_window.h"
#include "engine/ops/plugin_registry.h"
#include "ui/common/plugin_notifier.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/graph_editor/inspector_widget.h"
#include "ui/graph_editor/palette_widget.h"
#include "ui/plugins/plugins_dialog.h"
#include "ui/training/loss_editor.h"
#include "ui/training/training_config_form.h"
#include "ui/training/training_panel.h"

using kiln::app::MainWindow;
using namespace kiln::ui;

namespace {

const QString kPluginDir = QStringLiteral(KILN_TEST_PLUGIN_DIR);

// Input [8, 8, 4] into a GroupNorm from a plugin, the model's output.
const char* kProject = R"({"format": "kiln-project", "version": 2, "name": "plugin_live",
 "graph": {"nodes": [
   {"name": "x", "op": "Input", "attrs": {"shape": [8, 8, 4]}},
   {"name": "norm", "op": "Plugin", "inputs": ["x"], "attrs": {"plugin_op": "example.GroupNorm", "groups": 2}}]},
 "training": {"epochs": 1, "loss": "MeanSquaredError"}})";


// Waits for the modal window of type T to show, then runs `act` on it (from the event loop that
// the modal window's exec() runs).
template <typename T>
void whenModal(std::function<void(T*)> act) {
    auto* timer = new QTimer;
    timer->setInterval(20);
    QObject::connect(timer, &QTimer::timeout, [timer, act] {
        if (auto* w = qobject_cast<T*>(QApplication::activeModalWidget()); w && w->isVisible()) {
            timer->stop();
            timer->deleteLater();
            act(w);
        }
    });
    timer->start();
}

}  // namespace

class TestPluginLiveLoad : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_plugin_live_load"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        QVERIFY(!kiln::engine::ops::PluginRegistry::global().find("example.GroupNorm"));
    }

    void loadedPluginReachesTheStudio() {
        const QString path = m_dir.filePath(QStringLiteral("plugin_live.kiln"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kProject);
        }
        MainWindow w(m_dir.filePath(QStringLiteral("recovery")));
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        GraphEditorWidget* editor = w.editor();
        GraphScene* scene = editor->scene();
        QTRY_VERIFY(scene->analysis().find("norm") != nullptr);
        // Without its plugin the node has no shape, and the palette has no Plugins section.
        QTRY_VERIFY(!scene->analysis().find("norm")->error.empty());
        QVERIFY(!scene->analysis().find("norm")->hasShape);
        PaletteModel* palette = w.palette()->model();
        auto pluginSection = [&]() -> QModelIndex {
            for (int s = 0; s < palette->rowCount(); ++s)
                if (palette->index(s, 0).data().toString() == QStringLiteral("Plugins")) return palette->index(s, 0);
            return {};
        };
        QVERIFY(!pluginSection().isValid());
        auto* form = w.trainingPanel()->configForm();
        QVERIFY(!kiln::ui::training::LossEditor::lossTypes().contains(QStringLiteral("plugin:example.Huber")));

        // Help > Plugins… > Load Plugin…, twice: the two example plugins, chosen in the file dialog.
        QSignalSpy changed(&PluginNotifier::instance(), &PluginNotifier::pluginsChanged);
        int loadsLeft = 2;
        const QStringList files{kPluginDir + QStringLiteral("/group_norm.so"), kPluginDir + QStringLiteral("/huber_fbeta.so")};
        std::function<void(PluginsDialog*)> drive = [&](PluginsDialog* dialog) {
            if (loadsLeft == 0) {
                dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Close)->click();
                return;
            }
            const QString file = files[2 - loadsLeft];
            --loadsLeft;
            whenModal<QFileDialog>([file](QFileDialog* fd) {
                auto* name = fd->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
                QVERIFY(name);
                name->setText(file);
                QTest::keyClick(name, Qt::Key_Return);
            });
            QTimer::singleShot(0, dialog, [&, dialog] {
                QTest::mouseClick(dialog->loadButton(), Qt::LeftButton);
                // Back in the plugin dialog: the next file, or Close.
                QTimer::singleShot(0, dialog, [&, dialog] { drive(dialog); });
            });
        };
        whenModal<PluginsDialog>(drive);
        w.pluginsAction()->trigger();
        QCOMPARE(loadsLeft, 0);
        QCOMPARE(changed.count(), 2);

        // The palette lists the operation at once; a click selects it.
        const QModelIndex section = pluginSection();
        QVERIFY(section.isValid());
        QCOMPARE(palette->rowCount(section), 1);
        const QModelIndex opIndex = palette->index(0, 0, section);
        QCOMPARE(opIndex.data().toString(), QStringLiteral("example.GroupNorm"));
        QTreeView* view = w.palette()->view();
        auto* proxy = view->model();
        QModelIndex visible;
        for (int s = 0; s < proxy->rowCount(); ++s)
            if (proxy->index(s, 0).data().toString() == QStringLiteral("Plugins")) visible = proxy->index(0, 0, proxy->index(s, 0));
        QVERIFY(visible.isValid());
        view->scrollTo(visible);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(visible).center());
        QCOMPARE(view->currentIndex().data().toString(), QStringLiteral("example.GroupNorm"));

        // The project's node has its plugin now: the canvas analyses it again and it has a shape.
        QTRY_VERIFY(scene->analysis().find("norm") && scene->analysis().find("norm")->hasShape);
        QCOMPARE(scene->analysis().find("norm")->output.toString(), std::string("[N,8,8,4]"));
        QVERIFY(scene->analysis().find("norm")->error.empty());

        // Dropped on the canvas, the operation becomes a Plugin node with the plugin's form.
        std::unique_ptr<QMimeData> mime(palette->mimeData({opIndex}));
        QVERIFY(mime);
        EditorDocument* doc = w.document();
        const int before = int(doc->nodes().size());
        QWidget* viewport = editor->view()->viewport();
        const QPoint at = viewport->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(viewport, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(at), Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(viewport, &drop);
        QCOMPARE(int(doc->nodes().size()), before + 1);
        const EditorNode added = doc->nodes().back();
        QCOMPARE(QString::fromStdString(added.node.op), QStringLiteral("Plugin"));
        QCOMPARE(QString::fromStdString(added.node.attrs.getString("plugin_op")), QStringLiteral("example.GroupNorm"));
        w.inspector()->setNode(added.id);
        QVERIFY(w.inspector()->editorFor(QStringLiteral("groups")));
        QVERIFY(w.inspector()->editorFor(QStringLiteral("epsilon")));
        // Fed from the input, its shape is the input's.
        const std::string name = added.node.name;
        QVERIFY(doc->connectNodes(doc->nodes().front().id, added.id, 0).ok());
        QTRY_VERIFY(scene->analysis().find(name) && scene->analysis().find(name)->hasShape);
        QCOMPARE(scene->analysis().find(name)->output.toString(), std::string("[N,8,8,4]"));

        // The training form offers the other plugin's loss and metric.
        auto* type = qobject_cast<QComboBox*>(form->lossEditor()->table()->cellWidget(0, kiln::ui::training::LossEditor::TypeColumn));
        QVERIFY(type);
        QVERIFY(type->findData(QStringLiteral("plugin:example.Huber")) >= 0);
        bool metricListed = false;
        for (int i = 0; i < form->metricList()->count(); ++i)
            metricListed |= form->metricList()->item(i)->data(Qt::UserRole).toString() == QStringLiteral("plugin:example.FBeta");
        QVERIFY(metricListed);
    }
};

QTEST_MAIN(TestPluginLiveLoad)
#include "tst_plugin_live_load.moc"
