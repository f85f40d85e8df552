// SPDX-License-Identifier: Apache-2.0
// The palette: every op of the engine's table by category, and composite layers (the project's,
// the bundled library's and the user's library's); searchable; drag an entry onto the canvas or
// double-click it to add it.
#pragma once

#include <QAbstractItemModel>
#include <QWidget>

#include <vector>

#include "engine/io/layers.h"

class QLineEdit;
class QTreeView;
class QSortFilterProxyModel;

namespace kiln::ui {

// Mime types carried by palette drags: the op name.
inline constexpr const char* kOpMimeType = "application/x-kiln-op";
// A composite layer: a layerPayload() (its name, and definitions to copy into the project).
inline constexpr const char* kLayerMimeType = "application/x-kiln-layer";

class UserLayerLibrary;

// Two levels: categories (Input, Core, ..., Loss, Plugins, Layers) and their entries.
class PaletteModel : public QAbstractItemModel {
    Q_OBJECT
public:
    // KindRole: "op", "layer", "category". SourceRole (layers): "project",
    // "bundled" or "library"; PayloadRole (layers): the drag payload.
    enum Role { KindRole = Qt::UserRole + 1, IdRole, SourceRole, PayloadRole };
    explicit PaletteModel(QObject* parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QStringList mimeTypes() const override;
    QMimeData* mimeData(const QModelIndexList& indexes) const override;
    Qt::DropActions supportedDragActions() const override { return Qt::CopyAction; }

    // Fills the "Layers" section: the project's layers, the bundled ones the project does not
    // replace, and the user library's that neither has.
    void setLayers(const std::vector<engine::io::LayerDef>& project, const UserLayerLibrary* library);
    // Lists the operations of the plugins loaded now under "Plugins" (the section appears with
    // the first one); rows are inserted, nothing else moves.
    void refreshPlugins();

private:
    struct Entry {
        QString id, label, doc, kind;
        QString source;
        QByteArray payload;
    };
    struct Section {
        QString label;
        QVector<Entry> entries;
    };
    static Section pluginSection();
    QVector<Section> m_sections;
};

class PaletteWidget : public QWidget {
    Q_OBJECT
public:
    explicit PaletteWidget(QWidget* parent = nullptr);
    QLineEdit* searchField() const { return m_search; }
    QTreeView* view() const { return m_view; }
    PaletteModel* model() const { return m_model; }
    void setFilter(const QString& text);
    // The project's layers and the user's library, listed under "Layers" (the library's list
    // follows its changes).
    void setProjectLayers(const std::vector<engine::io::LayerDef>& layers);
    void setUserLibrary(UserLayerLibrary* library);
    // The mime data the palette would drag for this visible entry (tests, keyboard insertion).
    QMimeData* mimeDataFor(const QString& id) const;

signals:
    void opActivated(const QString& op);
    void layerActivated(const QByteArray& payload);

private:
    QLineEdit* m_search = nullptr;
    QTreeView* m_view = nullptr;
    PaletteModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    std::vector<engine::io::LayerDef> m_projectLayers;
    UserLayerLibrary* m_library = nullptr;
};

}  // namespace kiln::ui
