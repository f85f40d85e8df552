// SPDX-License-Identifier: Apache-2.0
// The Evaluate view's table models.
#include "ui/evaluate/evaluation_models.h"

#include <QColor>

#include <cmath>

#include "ui/common/theme.h"

namespace kiln::ui::evaluate {

namespace {

QString figure(double v) { return std::isfinite(v) ? QString::number(v, 'f', 4) : QStringLiteral("—"); }

}  // namespace

void ConfusionMatrixModel::set(const engine::eval::ClassificationReport* report) {
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
    case Qt::BackgroundRole: {
        // Right answers in blue, mistakes in red, stronger for a larger share of the true class.
        const QColor base = index.row() == index.column() ? QColor(33, 102, 172) : QColor(178, 24, 43);
        QColor c = base;
        c.setAlphaF(float(0.08 + 0.82 * share));
        return count > 0 ? QVariant(c) : QVariant();
    }
    case Qt::ForegroundRole: return share > 0.55 ? QVariant(QColor(Qt::white)) : QVariant();
    case Qt::ToolTipRole:
        return tr("True %1, predicted %2: %3 (%4 % of the true class)")
            .arg(QString::fromStdString(m_names[size_t(index.row())]), QString::fromStdString(m_names[size_t(index.column())]))
            .arg(count)
            .arg(share * 100, 0, 'f', 1);
    default: return {};
    }
}

QVariant ConfusionMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || section < 0 || section >= m_classes) return {};
    const QString name = QString::fromStdString(m_names[size_t(section)]);
    return orientation == Qt::Horizontal ? tr("→ %1").arg(name) : name;
}

void ClassFiguresModel::set(const engine::eval::ClassificationReport* report) {
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

void SampleTableModel::set(std::vector<engine::eval::SampleRecord> records, std::vector<std::string> classNames) {
    beginResetModel();
    m_records = std::move(records);
    m_names = std::move(classNames);
    endResetModel();
}

int SampleTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_records.size()); }
int SampleTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString SampleTableModel::className(int64_t c) const {
    if (c < 0) return {};
    return size_t(c) < m_names.size() ? QString::fromStdString(m_names[size_t(c)]) : QString::number(c);
}

QVariant SampleTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_records.size()) return {};
    const auto& r = m_records[size_t(index.row())];
    if (role == CorrectRole) return r.correct();
    if (role == Qt::ForegroundRole && r.trueClass >= 0 && !r.correct()) return Theme::instance().colors().errorText;
    if (role == SortRole) {
        switch (index.column()) {
        case Index: return QVariant::fromValue<qlonglong>(r.index);
        case Source: return QString::fromStdString(r.source);
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
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
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
    invalidateFilter();
}

bool SampleFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex&) const {
    if (m_true < 0 && m_predicted < 0) return true;
    const auto* samples = qobject_cast<const SampleTableModel*>(sourceModel());
    if (samples == nullptr || sourceRow >= samples->rowCount()) return true;
    const auto& r = samples->record(sourceRow);
    return (m_true < 0 || r.trueClass == m_true) && (m_predicted < 0 || r.predicted == m_predicted);
}

}  // namespace kiln::ui::evaluate
