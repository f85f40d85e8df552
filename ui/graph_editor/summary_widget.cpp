// SPDX-License-Identifier: Apache-2.0
// Summary table model and widget, fed by the live analysis.
#include "ui/graph_editor/summary_widget.h"

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/graph_editor/graph_analysis.h"

namespace kiln::ui {

SummaryModel::SummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void SummaryModel::setSummary(const std::optional<engine::ops::ModelSummary>& summary) {
    beginResetModel();
    m_summary = summary;
    endResetModel();
}

int SummaryModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !m_summary) return 0;
    return static_cast<int>(m_summary->rows.size());
}

int SummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_summary || index.row() >= rowCount()) return {};
    const auto& r = m_summary->rows[static_cast<size_t>(index.row())];
    const QLocale loc;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(r.name);
        case Op:
            return QString::fromStdString(r.op);
        case Output:
            return QString::fromStdString(r.output.toString());
        case Params:
            return r.sharedWith.empty() ? loc.toString(static_cast<qlonglong>(r.trainableParams))
                                        : tr("shared with %1").arg(QString::fromStdString(r.sharedWith));
        case Frozen:
            return loc.toString(static_cast<qlonglong>(r.frozenParams));
        case Macs:
            return loc.toString(static_cast<qlonglong>(r.macs));
        case Memory:
            return QString::fromStdString(engine::ops::humanBytes(r.activationBytes));
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() >= Params)
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Params:
            return static_cast<qlonglong>(r.trainableParams);
        case Frozen:
            return static_cast<qlonglong>(r.frozenParams);
        case Macs:
            return static_cast<qlonglong>(r.macs);
        case Memory:
            return static_cast<qlonglong>(r.activationBytes);
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    return {};
}

QVariant SummaryModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, o, role);
    switch (section) {
    case Name:
        return tr("Node");
    case Op:
        return tr("Op");
    case Output:
        return tr("Output shape");
    case Params:
        return tr("Trainable params");
    case Frozen:
        return tr("Frozen params");
    case Macs:
        return tr("MACs");
    case Memory:
        return tr("Activations");
    default:
        return {};
    }
}

SummaryWidget::SummaryWidget(QWidget* parent) : QWidget(parent) {
    m_model = new SummaryModel(this);
    m_view = new QTableView(this);
    m_view->setModel(m_model);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setAlternatingRowColors(true);
    m_totals = new QLabel(this);
    m_totals->setWordWrap(true);
    m_totals->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    auto* row = new QHBoxLayout;
    row->addWidget(m_totals, 1);
    auto* exportButton = new QPushButton(tr("Export as Text…"), this);
    connect(exportButton, &QPushButton::clicked, this, &SummaryWidget::exportTextInteractive);
    row->addWidget(exportButton, 0, Qt::AlignTop);
    layout->addLayout(row);
    m_totals->setText(tr("No analysis yet."));
}

void SummaryWidget::setAnalysis(const GraphAnalysis& analysis) {
    m_model->setSummary(analysis.summary);
    const QLocale loc;
    if (analysis.summary) {
        const auto& s = *analysis.summary;
        m_totals->setText(tr("Total: %1 trainable and %2 frozen parameters (%3), %4 MACs per sample, %5 of "
                             "activations per sample.")
                              .arg(loc.toString(static_cast<qlonglong>(s.trainableParams)),
                                   loc.toString(static_cast<qlonglong>(s.frozenParams)),
                                   QString::fromStdString(engine::ops::humanBytes(s.parameterBytes)),
                                   loc.toString(static_cast<qlonglong>(s.macs)),
                                   QString::fromStdString(engine::ops::humanBytes(s.activationBytes))));
    } else if (analysis.modelError) {
        m_totals->setText(
            tr("The model has a problem: %1").arg(QString::fromStdString(analysis.modelError->message)));
    } else {
        m_totals->setText(tr("The graph is empty."));
    }
}

QString SummaryWidget::totalsText() const {
    return m_totals->text();
}

QString SummaryWidget::summaryText() const {
    if (!m_model->summary()) return {};
    return QString::fromStdString(engine::ops::summaryText(*m_model->summary(), m_title.toStdString()));
}

bool SummaryWidget::exportText(const QString& path) const {
    const QString text = summaryText();
    if (text.isEmpty()) return false;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
    return f.write(text.toUtf8()) >= 0;
}

void SummaryWidget::exportTextInteractive() {
    if (summaryText().isEmpty()) {
        QMessageBox::information(this, tr("Export Summary"),
                                 tr("The model has a problem; fix it to get a summary."));
        return;
    }
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export Summary"), QString(), tr("Text files (*.txt)"));
    if (path.isEmpty()) return;
    if (!exportText(path))
        QMessageBox::warning(this, tr("Export Summary"), tr("Could not write %1.").arg(path));
}

}  // namespace kiln::ui
