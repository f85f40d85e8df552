// SPDX-License-Identifier: Apache-2.0
// WelcomePage: start, recent projects, examples with pictures, and the five-step tour.
#include "app/kiln/welcome_page.h"

#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include "ui/common/theme.h"
#include "ui/common/themed_icon.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_scene.h"

namespace kiln::app {

namespace {
constexpr int kSteps = 5;
const QSize kThumb(200, 150);

QLabel* heading(QWidget* parent) {
    auto* l = new QLabel(parent);
    QFont f = l->font();
    f.setPointSizeF(f.pointSizeF() * 1.25);
    f.setBold(true);
    l->setFont(f);
    return l;
}
}  // namespace

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("welcomePage"));
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    outer->addWidget(scroll);
    auto* body = new QWidget(scroll);
    scroll->setWidget(body);
    auto* layout = new QVBoxLayout(body);
    layout->setContentsMargins(32, 24, 32, 24);
    layout->setSpacing(12);

    m_title = new QLabel(body);
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.8);
    big.setBold(true);
    m_title->setFont(big);
    m_subtitle = new QLabel(body);
    m_subtitle->setWordWrap(true);
    layout->addWidget(m_title);
    layout->addWidget(m_subtitle);

    auto* start = new QHBoxLayout;
    m_new = new QPushButton(ui::themedIcon(QStringLiteral("new")), QString(), body);
    m_new->setObjectName(QStringLiteral("welcomeNew"));
    m_open = new QPushButton(ui::themedIcon(QStringLiteral("open")), QString(), body);
    m_open->setObjectName(QStringLiteral("welcomeOpen"));
    m_import = new QPushButton(ui::themedIcon(QStringLiteral("open")), QString(), body);
    m_import->setObjectName(QStringLiteral("welcomeImport"));
    m_pretrained = new QPushButton(QIcon(QStringLiteral(":/icons/new.svg")), QString(), body);
    m_pretrained->setObjectName(QStringLiteral("welcomePretrained"));
    for (QPushButton* b : {m_new, m_open, m_import, m_pretrained}) {
        b->setMinimumHeight(36);
        start->addWidget(b);
    }
    start->addStretch(1);
    layout->addLayout(start);

    auto* columns = new QHBoxLayout;
    columns->setSpacing(24);
    auto* left = new QVBoxLayout;
    m_recentTitle = heading(body);
    left->addWidget(m_recentTitle);
    m_recent = new QListWidget(body);
    m_recent->setObjectName(QStringLiteral("welcomeRecent"));
    m_recent->setMinimumWidth(320);
    m_recent->setMaximumHeight(240);
    left->addWidget(m_recent);
    m_noRecent = new QLabel(body);
    m_noRecent->setWordWrap(true);
    left->addWidget(m_noRecent);
    m_tourTitle = heading(body);
    left->addWidget(m_tourTitle);
    auto* tour = new QGridLayout;
    for (int i = 0; i < kSteps; ++i) {
        auto* text = new QLabel(body);
        text->setWordWrap(true);
        auto* button = new QPushButton(body);
        button->setObjectName(QStringLiteral("tourStep%1").arg(i + 1));
        tour->addWidget(text, i, 0);
        tour->addWidget(button, i, 1, Qt::AlignTop);
        m_tourTexts << text;
        m_tourButtons << button;
        connect(button, &QPushButton::clicked, this, [this, i] { emit tourStepRequested(i); });
    }
    tour->setColumnStretch(0, 1);
    left->addLayout(tour);
    left->addStretch(1);
    columns->addLayout(left, 2);

    auto* right = new QVBoxLayout;
    m_examplesTitle = heading(body);
    right->addWidget(m_examplesTitle);
    m_examples = new QListWidget(body);
    m_examples->setObjectName(QStringLiteral("welcomeExamples"));
    m_examples->setViewMode(QListView::IconMode);
    m_examples->setIconSize(kThumb);
    m_examples->setGridSize(QSize(kThumb.width() + 40, kThumb.height() + 56));
    m_examples->setResizeMode(QListView::Adjust);
    m_examples->setMovement(QListView::Static);
    m_examples->setWordWrap(true);
    m_examples->setMinimumHeight(kThumb.height() + 70);
    right->addWidget(m_examples, 1);
    columns->addLayout(right, 3);
    layout->addLayout(columns, 1);

    connect(m_new, &QPushButton::clicked, this, &WelcomePage::newProjectRequested);
    connect(m_open, &QPushButton::clicked, this, &WelcomePage::openRequested);
    connect(m_import, &QPushButton::clicked, this, &WelcomePage::importRequested);
    connect(m_pretrained, &QPushButton::clicked, this, &WelcomePage::pretrainedRequested);
    connect(m_recent, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit projectChosen(item->data(Qt::UserRole).toString()); });
    connect(m_examples, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit exampleChosen(item->data(Qt::UserRole).toString()); });
    // The thumbnails are pictures of the canvas: drawn again in the new theme's colours.
    connect(&ui::Theme::instance(), &ui::Theme::changed, this, [this] {
        for (int i = 0; i < m_examples->count(); ++i) {
            QListWidgetItem* item = m_examples->item(i);
            const QImage thumb = projectThumbnail(item->data(Qt::UserRole).toString(), kThumb);
            if (!thumb.isNull()) item->setIcon(QIcon(QPixmap::fromImage(thumb)));
        }
    });
    retranslate();
}

QImage WelcomePage::projectThumbnail(const QString& path, const QSize& size) {
    ui::EditorDocument document;
    ui::GraphScene scene(&document);  // first, so that the document lays out with the scene's card size
    if (!document.load(path).ok()) return {};
    const QRectF source = scene.diagramRect();
    if (source.isEmpty()) return {};
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(ui::Theme::instance().colors().thumbnailBackground);
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    // The whole diagram, centred, keeping its proportions.
    QSizeF fitted = source.size();
    fitted.scale(QSizeF(size) - QSizeF(8, 8), Qt::KeepAspectRatio);
    const QRectF target(QPointF((size.width() - fitted.width()) / 2, (size.height() - fitted.height()) / 2), fitted);
    scene.renderDiagram(&painter, target, source);
    painter.setPen(ui::Theme::instance().colors().thumbnailLine);
    painter.drawRect(QRect(QPoint(0, 0), size - QSize(1, 1)));
    return image;
}

void WelcomePage::refresh(const QStringList& recent, const QStringList& examples) {
    m_recent->clear();
    for (const QString& path : recent) {
        auto* item = new QListWidgetItem(QIcon(QStringLiteral(":/icons/kiln.svg")),
                                         QStringLiteral("%1\n%2").arg(QFileInfo(path).completeBaseName(),
                                                                      QDir::toNativeSeparators(path)),
                                         m_recent);
        item->setData(Qt::UserRole, path);
        item->setToolTip(QDir::toNativeSeparators(path));
    }
    m_recent->setVisible(!recent.isEmpty());
    m_noRecent->setVisible(recent.isEmpty());
    m_examples->clear();
    for (const QString& path : examples) {
        QString description;
        QFile f(path);
        if (f.open(QIODevice::ReadOnly))
            description = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("description")).toString();
        const QImage thumb = projectThumbnail(path, kThumb);
        auto* item = new QListWidgetItem(thumb.isNull() ? ui::themedIcon(QStringLiteral("example"))
                                                        : QIcon(QPixmap::fromImage(thumb)),
                                         QFileInfo(path).completeBaseName(), m_examples);
        item->setData(Qt::UserRole, path);
        item->setToolTip(description);
        item->setStatusTip(description);
    }
}

void WelcomePage::retranslate() {
    m_title->setText(tr("Welcome to Kiln"));
    m_subtitle->setText(tr("Design a network on the canvas, train it on your CPU or GPU, see how it does, and "
                           "export it for serving — without writing code."));
    m_new->setText(tr("New Project"));
    m_open->setText(tr("Open Project…"));
    m_import->setText(tr("Import Model…"));
    m_import->setToolTip(tr("Bring in an ONNX model, e.g. a pretrained network, as an editable project"));
    m_pretrained->setText(tr("New from Pretrained…"));
    m_pretrained->setToolTip(tr("Start a classifier from a pretrained network such as EfficientNet-Lite0"));
    m_recentTitle->setText(tr("Recent projects"));
    m_noRecent->setText(tr("No recent projects yet: start with an example on the right, or follow the tour below."));
    m_examplesTitle->setText(tr("Examples (double-click to open)"));
    m_tourTitle->setText(tr("Your first model in five steps"));
    const QStringList steps = {
        tr("1. Open the Fashion-MNIST example: a small network that tells ten kinds of clothing apart."),
        tr("2. Design: look at the graph. Select a layer to see its settings in the Inspector and its "
           "size in the Summary."),
        tr("3. Data: the project reads 60,000 small pictures; the Augmentation tab shows what training "
           "sees."),
        tr("4. Train: press Train and watch loss and accuracy fall and rise, for training and validation "
           "in one chart."),
        tr("5. Evaluate: which classes are confused, and the worst samples; then Deploy to export and "
           "serve the model.")};
    const QStringList buttons = {tr("Open the example"), tr("Show Design"), tr("Show Data"), tr("Show Train"),
                                 tr("Show Evaluate")};
    for (int i = 0; i < kSteps; ++i) {
        m_tourTexts[i]->setText(steps[i]);
        m_tourButtons[i]->setText(buttons[i]);
    }
}

void WelcomePage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace kiln::app
