// SPDX-License-Identifier: Apache-2.0
// The palette: every op of the engine's table by category, plus templates; searchable; drag
// an entry onto the canvas or double-click it to add it.
#pragma once

#include <QAbstractItemModel>
#include <QWidget>

class QLineEdit;
class QTreeView;
class QSortFilterProxyModel;

namespace kiln::ui {

// Mime types carried by palette drags: the op name, or a template id.
inline constexpr const char* kOpMimeType = "application/x-kiln-op";
inline constexpr const char* kTemplateMimeType = "application/x-kiln-template";

// Two levels: categories (Input, Core, ..., Loss, Templates) and their entries.
class PaletteModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Role { KindRole = Qt::UserRole + 1, IdRole };  // KindRole: "op", "template", "category"
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

    // Template ids and their display names.
    static QStringList templateIds();
    static QString templateName(const QString& id);

private:
    struct Entry {
        QString id, label, doc, kind;
    };
    struct Section {
        QString label;
        QVector<Entry> entries;
    };
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
    // The mime data the palette would drag for this visible entry (tests, keyboard insertion).
    QMimeData* mimeDataFor(const QString& id) const;

signals:
    void opActivated(const QString& op);
    void templateActivated(const QString& templateId);

private:
    QLineEdit* m_search = nullptr;
    QTreeView* m_view = nullptr;
    PaletteModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
};

}  // namespace kiln::ui
