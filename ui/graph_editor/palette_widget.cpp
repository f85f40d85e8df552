// SPDX-License-Identifier: Apache-2.0
// Palette model (categories from the engine's op table and composite layers) and its searchable
// view.
#include "ui/graph_editor/palette_widget.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QMimeData>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>

#include "engine/ops/op_table.h"
#include "engine/api/plugins.h"
#include "ui/common/plugin_notifier.h"
#include "ui/graph_editor/layer_library.h"

namespace kiln::ui {
namespace {

// Internal ids: a section row has internalId 0; an entry has internalId = section + 1.
constexpr quintptr kSectionId = 0;

QString categoryLabel(engine::ops::Category c) {
    using C = engine::ops::Category;
    switch (c) {
    case C::Input:
        return PaletteModel::tr("Input");
    case C::Core:
        return PaletteModel::tr("Core");
    case C::Convolution:
        return PaletteModel::tr("Convolution");
    case C::Pooling:
        return PaletteModel::tr("Pooling");
    case C::Normalization:
        return PaletteModel::tr("Normalization");
    case C::Regularization:
        return PaletteModel::tr("Regularization");
    case C::Merge:
        return PaletteModel::tr("Merge");
    case C::Activation:
        return PaletteModel::tr("Activation");
    case C::Loss:
        return PaletteModel::tr("Loss");
    case C::Plugin:
        return PaletteModel::tr("Plugins");
    }
    return {};
}

}  // namespace

PaletteModel::PaletteModel(QObject* parent) : QAbstractItemModel(parent) {
    using C = engine::ops::Category;
    for (C c : {C::Input, C::Core, C::Convolution, C::Pooling, C::Normalization, C::Regularization, C::Merge,
                C::Activation, C::Loss, C::Plugin}) {
        Section s{categoryLabel(c), {}};
        if (c == C::Plugin) {
            s = pluginSection();
            if (!s.entries.isEmpty()) m_sections.push_back(s);
            continue;
        }
        for (const auto& def : engine::ops::opTable()) {
            // Placeholders come from imported models only; there is nothing to add by hand.
            if (def.category != c || def.kind == engine::ops::OpKind::Placeholder) continue;
            QString name = QString::fromUtf8(def.name.data(), static_cast<int>(def.name.size()));
            s.entries.push_back({name, name,
                                 QString::fromUtf8(def.doc.data(), static_cast<int>(def.doc.size())),
                                 QStringLiteral("op")});
        }
        m_sections.push_back(s);
    }
    m_sections.push_back(Section{tr("Layers"), {}});
    setLayers({}, nullptr);
}

PaletteModel::Section PaletteModel::pluginSection() {
    // The operations of the loaded plugins, by their namespaced names; the generic Plugin row
    // itself is not listed (a node needs an operation).
    Section s{categoryLabel(engine::ops::Category::Plugin), {}};
    for (const auto& op : engine::api::pluginOps()) {
        const QString name = QString::fromStdString(op.name);
        s.entries.push_back({name, name, QString::fromStdString(op.doc), QStringLiteral("op"), QStringLiteral("plugin")});
    }
    return s;
}

void PaletteModel::refreshPlugins() {
    Section fresh = pluginSection();
    const QString label = fresh.label;
    int at = -1;
    for (int i = 0; i < m_sections.size(); ++i)
        if (m_sections[i].label == label) at = i;
    if (at < 0) {
        if (fresh.entries.isEmpty()) return;
        // The section goes after the built-in categories, before Layers.
        const int row = static_cast<int>(m_sections.size()) - 1;
        beginInsertRows({}, row, row);
        m_sections.insert(row, fresh);
        endInsertRows();
        return;
    }
    // Plugins are never unloaded: the new list starts with the old one, so only rows are added.
    Section& current = m_sections[at];
    const int before = static_cast<int>(current.entries.size());
    const int after = static_cast<int>(fresh.entries.size());
    if (after <= before) return;
    beginInsertRows(index(at, 0), before, after - 1);
    current.entries = std::move(fresh.entries);
    endInsertRows();
}

void PaletteModel::setLayers(const std::vector<engine::io::LayerDef>& project, const UserLayerLibrary* library) {
    Section s{tr("Layers"), {}};
    QSet<QString> listed;
    auto add = [&](const engine::io::LayerDef& d, const QString& source, const QString& where, QByteArray payload) {
        const QString name = QString::fromStdString(d.name);
        if (listed.contains(name)) return;
        listed.insert(name);
        QString doc = d.doc.empty() ? tr("Composite layer of %n node(s)", nullptr, static_cast<int>(d.nodes.size()))
                                    : QString::fromStdString(d.doc);
        s.entries.push_back({name, tr("%1 (%2)").arg(name, where), doc, QStringLiteral("layer"), source, std::move(payload)});
    };
    for (const auto& d : project) add(d, QStringLiteral("project"), tr("project"), layerPayload(d.name));
    for (const auto& d : engine::io::bundledLayers().layers())
        add(d, QStringLiteral("bundled"), tr("built-in"), layerPayload(d.name));
    if (library)
        for (const auto& l : library->layers())
            add(l.layer(), QStringLiteral("library"), tr("my library"), layerPayload(l.layer().name, l.definitions));
    const int row = static_cast<int>(m_sections.size()) - 1;
    const QModelIndex parentIndex = index(row, 0);
    if (!m_sections[row].entries.isEmpty()) {
        beginRemoveRows(parentIndex, 0, static_cast<int>(m_sections[row].entries.size()) - 1);
        m_sections[row].entries.clear();
        endRemoveRows();
    }
    if (!s.entries.isEmpty()) {
        beginInsertRows(parentIndex, 0, static_cast<int>(s.entries.size()) - 1);
        m_sections[row].entries = std::move(s.entries);
        endInsertRows();
    }
}

QModelIndex PaletteModel::index(int row, int column, const QModelIndex& parent) const {
    if (column != 0 || row < 0) return {};
    if (!parent.isValid()) return row < m_sections.size() ? createIndex(row, 0, kSectionId) : QModelIndex();
    if (parent.internalId() != kSectionId || parent.row() >= m_sections.size()) return {};
    const auto& s = m_sections[parent.row()];
    return row < s.entries.size() ? createIndex(row, 0, static_cast<quintptr>(parent.row()) + 1)
                                  : QModelIndex();
}

QModelIndex PaletteModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == kSectionId) return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kSectionId);
}

int PaletteModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return static_cast<int>(m_sections.size());
    if (parent.column() != 0 || parent.internalId() != kSectionId) return 0;
    return static_cast<int>(m_sections[parent.row()].entries.size());
}

int PaletteModel::columnCount(const QModelIndex&) const {
    return 1;
}

QVariant PaletteModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    if (index.internalId() == kSectionId) {
        const auto& s = m_sections[index.row()];
        if (role == Qt::DisplayRole) return s.label;
        if (role == KindRole) return QStringLiteral("category");
        if (role == IdRole) return s.label;
        return {};
    }
    const auto& e = m_sections[static_cast<int>(index.internalId() - 1)].entries[index.row()];
    switch (role) {
    case Qt::DisplayRole:
        return e.label;
    case Qt::ToolTipRole:
        return e.doc;
    case Qt::StatusTipRole:
        return e.doc;
    case KindRole:
        return e.kind;
    case IdRole:
        return e.id;
    case SourceRole:
        return e.source;
    case PayloadRole:
        return e.payload;
    default:
        return {};
    }
}

Qt::ItemFlags PaletteModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    if (index.internalId() == kSectionId) return Qt::ItemIsEnabled;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled | Qt::ItemNeverHasChildren;
}

QStringList PaletteModel::mimeTypes() const {
    return {QString::fromLatin1(kOpMimeType), QString::fromLatin1(kLayerMimeType)};
}

QMimeData* PaletteModel::mimeData(const QModelIndexList& indexes) const {
    for (const auto& idx : indexes) {
        if (!idx.isValid() || idx.internalId() == kSectionId) continue;
        auto* mime = new QMimeData;
        const QString kind = idx.data(KindRole).toString();
        const QByteArray id = idx.data(IdRole).toString().toUtf8();
        if (kind == QLatin1String("layer")) {
            mime->setData(kLayerMimeType, idx.data(PayloadRole).toByteArray());
            mime->setText(QString::fromUtf8(id));
            return mime;
        }
        mime->setData(kOpMimeType, id);
        mime->setText(QString::fromUtf8(id));
        return mime;
    }
    return nullptr;
}

PaletteWidget::PaletteWidget(QWidget* parent) : QWidget(parent) {
    m_model = new PaletteModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setRecursiveFilteringEnabled(true);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_search = new QLineEdit(this);
    m_search->setPlaceholderText(tr("Search ops…"));
    m_search->setClearButtonEnabled(true);
    m_view = new QTreeView(this);
    m_view->setModel(m_proxy);
    m_view->setHeaderHidden(true);
    m_view->setDragEnabled(true);
    m_view->setDragDropMode(QAbstractItemView::DragOnly);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setUniformRowHeights(true);
    m_view->expandAll();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_search);
    layout->addWidget(m_view);
    connect(m_search, &QLineEdit::textChanged, this, &PaletteWidget::setFilter);
    // A plugin loaded while the studio runs joins the palette at once.
    connect(&PluginNotifier::instance(), &PluginNotifier::pluginsChanged, this, [this] {
        m_model->refreshPlugins();
        m_view->expandAll();
    });
    // activated: a double-click, or Enter on the current entry.
    connect(m_view, &QTreeView::activated, this, [this](const QModelIndex& idx) {
        const QString kind = idx.data(PaletteModel::KindRole).toString();
        const QString id = idx.data(PaletteModel::IdRole).toString();
        if (kind == QLatin1String("op"))
            emit opActivated(id);
        else if (kind == QLatin1String("layer"))
            emit layerActivated(idx.data(PaletteModel::PayloadRole).toByteArray());
    });
}

void PaletteWidget::setProjectLayers(const std::vector<engine::io::LayerDef>& layers) {
    m_projectLayers = layers;
    m_model->setLayers(m_projectLayers, m_library);
    m_view->expandAll();
}

void PaletteWidget::setUserLibrary(UserLayerLibrary* library) {
    if (m_library) disconnect(m_library, nullptr, this, nullptr);
    m_library = library;
    if (m_library)
        connect(m_library, &UserLayerLibrary::changed, this, [this] {
            m_model->setLayers(m_projectLayers, m_library);
            m_view->expandAll();
        });
    m_model->setLayers(m_projectLayers, m_library);
    m_view->expandAll();
}

void PaletteWidget::setFilter(const QString& text) {
    if (m_search->text() != text) m_search->setText(text);
    m_proxy->setFilterFixedString(text);
    m_view->expandAll();
}

QMimeData* PaletteWidget::mimeDataFor(const QString& id) const {
    for (int s = 0; s < m_model->rowCount(); ++s) {
        QModelIndex section = m_model->index(s, 0);
        for (int r = 0; r < m_model->rowCount(section); ++r) {
            QModelIndex idx = m_model->index(r, 0, section);
            if (idx.data(PaletteModel::IdRole).toString() == id) return m_model->mimeData({idx});
        }
    }
    return nullptr;
}

}  // namespace kiln::ui
