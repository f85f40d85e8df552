// SPDX-License-Identifier: Apache-2.0
// The Evaluate view's table models.
#include "ui/evaluate/evaluation_models.h"

#include <QColor>
#include <QPalette>
#include <QIcon>
#include <QPixmap>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ui/common/contrast.h"
#include "ui/common/theme.h"
#include "ui/dataset_browser/thumbnail_cache.h"

namespace kiln::ui::evaluate {

namespace {

QString figure(double v) { return std::isfinite(v) ? QString::number(v, 'f', 4) : QStringLiteral("—"); }

// The sort key of a source: its text, with a trailing line number ("table.csv:17") or byte offset
// ("a.tfrecord@4096") padded to a fixed width, so that line 9 comes before line 10.
QString sourceSortKey(const std::string& source) {
    const size_t at = source.find_last_of(":@");
    if (at == std::string::npos || at + 1 >= source.size() ||
        !std::all_of(source.begin() + static_cast<std::ptrdiff_t>(at) + 1, source.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return QString::fromStdString(source);
    const std::string number = source.substr(at + 1);
    return QString::fromStdString(source.substr(0, at + 1) + std::string(number.size() < 20 ? 20 - number.size() : 0, '0') + number);
}

QColor mix(const QColor& a, const QColor& b, double t) {  // a at t = 0, b at t = 1
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t), float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

// A heat-map cell and the colour of its count: the theme's table background tinted towards `hue`
// by `strength` (0..1), opaque, with the theme's text colour, white or near-black, whichever reads
// best. A mid-strength tint can sit where neither reaches WCAG AA (4.5:1); such a cell is moved
// towards white or black, away from its text, until it does.
struct HeatCell {
    QColor background, text;
};

HeatCell heat(const QColor& hue, double strength) {
    const QColor base = Theme::palette(Theme::instance().kind()).color(QPalette::Base);
    HeatCell cell{mix(base, hue, std::clamp(strength, 0.0, 1.0)), {}};
    const QColor candidates[] = {Theme::palette(Theme::instance().kind()).color(QPalette::Text), QColor(Qt::white),
                                 QColor(0x1a, 0x1a, 0x1a)};
    cell.text = candidates[0];
    for (const QColor& c : candidates)
        if (contrastRatio(c, cell.background) > contrastRatio(cell.text, cell.background) + 0.5) cell.text = c;
    const QColor away = relativeLuminance(cell.text) > 0.5 ? QColor(Qt::black) : QColor(Qt::white);
    for (int step = 0; step < 20 && contrastRatio(cell.text, cell.background) < 4.5; ++step)
        cell.background = mix(cell.background, away, 0.05);
    return cell;
}

}  // namespace

void ConfusionMatrixModel::set(const engine::api::ClassificationReport* report) {
    beginResetModel();
    m_classes = report ? report->numClasses : 0;
    m_counts = report ? report->confusion : std::vector<int64_t>{};
    m_names = report ? report->classNames : std::vector<std::string>{};
    endResetModel();
}

int ConfusionMatrixModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_classes); }
int ConfusionMatrixModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_classes); }

QVariant ConfusionMatrixModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_classes || index.column() >= m_classes) return {};
    const int64_t count = m_counts[size_t(index.row() * m_classes + index.column())];
    int64_t row = 0;
    for (int64_t c = 0; c < m_classes; ++c) row += m_counts[size_t(index.row() * m_classes + c)];
    const double share = row > 0 ? double(count) / double(row) : 0.0;
    switch (role) {
    case Qt::DisplayRole: return QVariant::fromValue<qlonglong>(count);
    case Qt::TextAlignmentRole: return int(Qt::AlignCenter);
    case Qt::BackgroundRole:
    case Qt::ForegroundRole: {
        // Right answers in blue, mistakes in red, stronger for a larger share of the true class;
        // the count in whichever text colour reads best on the cell, in both themes.
        if (count <= 0) return {};
        const QColor hue = index.row() == index.column() ? QColor(33, 102, 172) : QColor(178, 24, 43);
        const HeatCell cell = heat(hue, 0.08 + 0.82 * share);
        return role == Qt::BackgroundRole ? QVariant(cell.background) : QVariant(cell.text);
    }
    case Qt::ToolTipRole:
        return tr("True %1, predicted %2: %3 (%4 % of the true class)")
            .arg(QString::fromStdString(m_names[size_t(index.row())]), QString::fromStdString(m_names[size_t(index.column())]))
            .arg(count)
            .arg(share * 100, 0, 'f', 1);
    default: return {};
    }
}

QVariant ConfusionMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (section < 0 || section >= m_classes) return {};
    const QString name = QString::fromStdString(m_names[size_t(section)]);
    if (role == Qt::ToolTipRole)
        return orientation == Qt::Horizontal ? tr("Predicted %1").arg(name) : tr("True %1").arg(name);
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return name;
    // Ten or more columns share the view's width: a predicted class's name breaks after its spaces
    // and slashes, so that "Ankle boot" and "T-shirt/top" fit a narrow column on two lines instead
    // of being cut off.
    QString wrapped = name;
    if (m_classes > 4) {
        wrapped.replace(QLatin1Char(' '), QLatin1Char('\n'));
        wrapped.replace(QLatin1Char('/'), QStringLiteral("/\n"));
    }
    return tr("→ %1").arg(wrapped);
}

void ClassFiguresModel::set(const engine::api::ClassificationReport* report) {
    beginResetModel();
    m_rows.clear();
    if (report) {
        for (size_t c = 0; c < report->perClass.size(); ++c) {
            const auto& f = report->perClass[c];
            m_rows.push_back({QString::fromStdString(f.name), f.precision, f.recall, f.f1, report->roc[c].auc,
                              report->pr[c].averagePrecision, f.support, false});
        }
        m_rows.push_back({tr("macro average"), report->macro.precision, report->macro.recall, report->macro.f1,
                          report->macroAuc, NAN, report->macro.support, true});
        m_rows.push_back({tr("weighted average"), report->weighted.precision, report->weighted.recall, report->weighted.f1,
                          NAN, NAN, report->weighted.support, true});
    }
    endResetModel();
}

int ClassFiguresModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int ClassFiguresModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ClassFiguresModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size()) return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == Qt::FontRole && r.average) {
        QFont f;
        f.setItalic(true);
        return f;
    }
    if (role == Qt::TextAlignmentRole && index.column() != Class) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Class: return r.name;
    case Precision: return figure(r.precision);
    case Recall: return figure(r.recall);
    case F1: return figure(r.f1);
    case Support: return r.support;
    case Auc: return figure(r.auc);
    case AveragePrecision: return figure(r.ap);
    default: return {};
    }
}

QVariant ClassFiguresModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Class: return tr("Class");
    case Precision: return tr("Precision");
    case Recall: return tr("Recall");
    case F1: return tr("F1");
    case Support: return tr("Support");
    case Auc: return tr("ROC AUC");
    case AveragePrecision: return tr("Average precision");
    default: return {};
    }
}

void SampleTableModel::set(std::vector<engine::api::EvaluationRecord> records, std::vector<std::string> classNames,
                           std::shared_ptr<const engine::api::SampleFeatures> features) {
    beginResetModel();
    m_records = std::move(records);
    m_names = std::move(classNames);
    m_features = features && features->count() > 0 ? std::move(features) : nullptr;
    m_rowOfSample.clear();
    for (size_t row = 0; row < m_records.size(); ++row) m_rowOfSample.insert(m_records[row].index, int(row));
    endResetModel();
}

void SampleTableModel::setPictures(ThumbnailCache* thumbnails, PictureLookup lookup) {
    disconnect(m_ready);
    disconnect(m_failed);
    m_thumbnails = thumbnails;
    m_lookup = thumbnails != nullptr ? std::move(lookup) : PictureLookup{};
    if (thumbnails != nullptr) {
        m_ready = connect(thumbnails, &ThumbnailCache::thumbnailReady, this, &SampleTableModel::pictureReady);
        m_failed = connect(thumbnails, &ThumbnailCache::thumbnailFailed, this, [this](qint64 id, const QString&) { pictureReady(id); });
    }
    if (!m_records.empty()) emit dataChanged(index(0, Picture), index(rowCount() - 1, Picture), {Qt::DecorationRole});
}

bool SampleTableModel::hasPictures() const { return !m_thumbnails.isNull(); }

void SampleTableModel::pictureReady(qint64 sampleIndex) {
    const auto it = m_rowOfSample.constFind(sampleIndex);
    if (it == m_rowOfSample.constEnd()) return;
    const QModelIndex at = index(*it, Picture);
    emit dataChanged(at, at, {Qt::DecorationRole});
}

int SampleTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_records.size()); }
int SampleTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount + featureColumns(); }

int SampleTableModel::featureColumns() const {
    if (!m_features) return 0;
    return compactFeatures() ? 1 : int(m_features->count());
}

bool SampleTableModel::compactFeatures() const { return m_features && m_features->count() > kMaxFeatureColumns; }

QString SampleTableModel::featureText(int64_t sample, size_t feature) const {
    const std::string text = m_features->text(sample, feature);
    return text.empty() && std::isnan(m_features->value(sample, feature)) ? QStringLiteral("—") : QString::fromStdString(text);
}

QVariant SampleTableModel::featureSortValue(int64_t sample, size_t feature) const {
    if (feature < m_features->categories.size() && !m_features->categories[feature].empty())
        return QString::fromStdString(m_features->text(sample, feature));
    // A missing value sorts below every number (NaN would not sort at all).
    const float v = m_features->value(sample, feature);
    return std::isnan(v) ? -std::numeric_limits<double>::infinity() : double(v);
}

QVariant SampleTableModel::featureData(const engine::api::EvaluationRecord& r, int column, int role) const {
    const engine::api::SampleFeatures& f = *m_features;
    if (compactFeatures()) {
        switch (role) {
        case Qt::DisplayRole: {
            QStringList pairs;
            for (size_t k = 0; k < kCompactFeatures; ++k)
                pairs << tr("%1=%2", "a feature's name and value").arg(QString::fromStdString(f.names[k]), featureText(r.index, k));
            return tr("%1, …", "the first features of a sample; more follow").arg(pairs.join(tr(", ", "between features")));
        }
        case Qt::ToolTipRole: {
            QStringList lines;
            for (size_t k = 0; k < f.count(); ++k)
                lines << tr("%1 = %2", "a feature's name and value, in a list").arg(QString::fromStdString(f.names[k]), featureText(r.index, k));
            return lines.join(QLatin1Char('\n'));
        }
        case SortRole: return featureSortValue(r.index, 0);
        default: return {};
        }
    }
    const auto k = size_t(column - ColumnCount);
    const bool number = k >= f.categories.size() || f.categories[k].empty();
    switch (role) {
    case Qt::DisplayRole: return featureText(r.index, k);
    case Qt::ToolTipRole:
        return tr("%1 = %2", "a feature's name and value, in a list").arg(QString::fromStdString(f.names[k]), featureText(r.index, k));
    case Qt::TextAlignmentRole: return number ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case SortRole: return featureSortValue(r.index, k);
    default: return {};
    }
}

QString SampleTableModel::className(int64_t c) const {
    if (c < 0) return {};
    return size_t(c) < m_names.size() ? QString::fromStdString(m_names[size_t(c)]) : QString::number(c);
}

QVariant SampleTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_records.size()) return {};
    const auto& r = m_records[size_t(index.row())];
    if (role == CorrectRole) return r.correct();
    if (index.column() == Picture) {
        if (role != Qt::DecorationRole || !m_thumbnails || !m_lookup) return {};
        // Asked for by the view only for rows on screen: the path is looked up (or queued for
        // drawing) and the thumbnail decoded on the cache's threads, never here.
        // An icon, so that the view paints it at its icon size (the cache's thumbnails are larger).
        const QString path = m_lookup(r);
        QPixmap pixmap;
        if (!path.isEmpty()) pixmap = m_thumbnails->thumbnail(r.index, path);
        if (!pixmap.isNull()) return QIcon(pixmap);
        static QIcon placeholder;
        if (placeholder.isNull()) {
            QPixmap grey(32, 32);
            grey.fill(QColor(128, 128, 128, 50));
            placeholder = QIcon(grey);
        }
        return placeholder;
    }
    if (role == Qt::ForegroundRole && r.trueClass >= 0 && !r.correct()) return Theme::instance().colors().errorText;
    if (index.column() >= ColumnCount) return m_features ? featureData(r, index.column(), role) : QVariant();
    if (role == SortRole) {
        switch (index.column()) {
        case Index: return QVariant::fromValue<qlonglong>(r.index);
        case Source: return sourceSortKey(r.source);
        case True: return className(r.trueClass);
        case Predicted: return className(r.predicted);
        case Confidence: return r.confidence;
        case Loss: return r.loss;
        default: return {};
        }
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
    case Index: return QVariant::fromValue<qlonglong>(r.index);
    case Source: return QString::fromStdString(r.source);
    case True: return className(r.trueClass);
    case Predicted: return className(r.predicted);
    case Confidence: return figure(r.confidence);
    case Loss: return figure(r.loss);
    default: return {};
    }
}

QVariant SampleTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (section >= ColumnCount && m_features && section < columnCount()) {
        if (compactFeatures()) {
            if (role == Qt::DisplayRole) return tr("Features");
            if (role == Qt::ToolTipRole)
                return tr("The sample's first %1 of %2 feature values, as the file holds them; a sample's tooltip "
                          "lists them all. A click sorts by the first feature.")
                    .arg(kCompactFeatures)
                    .arg(m_features->count());
            return {};
        }
        const QString name = QString::fromStdString(m_features->names[size_t(section - ColumnCount)]);
        if (role == Qt::DisplayRole) return name;
        if (role == Qt::ToolTipRole) return tr("%1, as the file holds it").arg(name);
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
    case Picture: return tr("Picture");
    case Index: return tr("#");
    case Source: return tr("Source");
    case True: return tr("True");
    case Predicted: return tr("Predicted");
    case Confidence: return tr("Confidence");
    case Loss: return tr("Loss");
    default: return {};
    }
}

void SampleFilterProxy::setClassFilter(int64_t trueClass, int64_t predicted) {
    if (trueClass == m_true && predicted == m_predicted) return;
    m_true = trueClass;
    m_predicted = predicted;
    // A class filter keeps or drops thousands of scattered rows at once. invalidateFilter() would
    // announce each run of dropped rows separately (one signal pair per gap, each moving the whole
    // row mapping); invalidate() rebuilds the mapping once, as one layout change.
    invalidate();
}

bool SampleFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex&) const {
    if (m_true < 0 && m_predicted < 0) return true;
    const auto* samples = qobject_cast<const SampleTableModel*>(sourceModel());
    if (samples == nullptr || sourceRow >= samples->rowCount()) return true;
    const auto& r = samples->record(sourceRow);
    return (m_true < 0 || r.trueClass == m_true) && (m_predicted < 0 || r.predicted == m_predicted);
}

}  // namespace kiln::ui::evaluate
