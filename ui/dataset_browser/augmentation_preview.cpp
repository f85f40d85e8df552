// SPDX-License-Identifier: Apache-2.0
// Augmentation preview: one encoded picture through the transforms once per epoch
// (api::augmentPicture), shown as tiles.
#include "ui/dataset_browser/augmentation_preview.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "engine/core/json_checked.h"
#include "engine/api/data_preview.h"
#include "ui/dataset_browser/transform_list_editor.h"

namespace kiln::ui {

namespace {

constexpr int kTile = 112;

QImage::Format formatOf(const engine::api::DisplayPicture& picture) {
    return picture.channels == 1   ? QImage::Format_Grayscale8
           : picture.channels == 3 ? QImage::Format_RGB888
           : picture.channels == 4 ? QImage::Format_RGBA8888
                                   : QImage::Format_Invalid;
}

}  // namespace

QImage imageFromPicture(const engine::api::DisplayPicture& picture) {
    const QImage::Format format = formatOf(picture);
    if (format == QImage::Format_Invalid || picture.pixels.empty()) return {};
    return QImage(picture.pixels.data(), picture.width, picture.height,
                  static_cast<qsizetype>(picture.width) * picture.channels, format)
        .copy();
}

QImage imageFromPicture(engine::api::DisplayPicture&& picture) {
    const QImage::Format format = formatOf(picture);
    if (format == QImage::Format_Invalid || picture.width <= 0 || picture.height <= 0 ||
        picture.pixels.size() < static_cast<size_t>(picture.width) * picture.height * picture.channels)
        return {};
    // The QImage keeps the vector alive and frees it with its last copy.
    auto* pixels = new std::vector<uint8_t>(std::move(picture.pixels));
    return QImage(
        pixels->data(), picture.width, picture.height, static_cast<qsizetype>(picture.width) * picture.channels,
        format, [](void* owned) { delete static_cast<std::vector<uint8_t>*>(owned); }, pixels);
}

nlohmann::json AugmentationPreview::defaultTransforms() {
    return nlohmann::json::parse(R"([
  {"type": "flip", "horizontal": true, "probability": 0.5},
  {"type": "rotate", "degrees": 15},
  {"type": "brightness_contrast", "brightness": 0.2, "contrast": 0.2}
])");
}

AugmentationPreview::AugmentationPreview(QWidget* parent)
    : QWidget(parent),
      m_transforms(defaultTransforms()),
      m_status(new QLabel(this)),
      m_editor(new QPlainTextEdit(this)) {
    auto* layout = new QVBoxLayout(this);
    auto* grid = new QGridLayout;
    for (int i = 0; i < kVariants; ++i) {
        auto* tile = new QLabel(this);
        tile->setFixedSize(kTile, kTile);
        tile->setAlignment(Qt::AlignCenter);
        tile->setFrameShape(QFrame::StyledPanel);
        tile->setToolTip(tr("Pass %1 through the transforms").arg(i + 1));
        grid->addWidget(tile, i / 4, i % 4);
        m_tiles.append(tile);
    }
    layout->addLayout(grid);
    auto* again = new QPushButton(tr("New random draw"), this);
    layout->addWidget(again);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    // The transforms as a form (a list with typed fields), or as the data section's JSON text.
    auto* header = new QHBoxLayout;
    header->addWidget(new QLabel(tr("Transforms, applied from top to bottom:"), this), 1);
    m_textToggle = new QPushButton(tr("Edit as text"), this);
    m_textToggle->setObjectName(QStringLiteral("editTransformsAsText"));
    m_textToggle->setCheckable(true);
    header->addWidget(m_textToggle);
    layout->addLayout(header);
    m_modes = new QStackedWidget(this);
    m_form = new TransformListEditor(m_modes);
    m_form->setObjectName(QStringLiteral("transformForm"));
    m_form->setTransforms(m_transforms);
    m_modes->addWidget(m_form);
    auto* textPage = new QWidget(m_modes);
    auto* textLayout = new QVBoxLayout(textPage);
    textLayout->setContentsMargins(0, 0, 0, 0);
    m_editor->setParent(textPage);
    m_editor->setPlainText(QString::fromStdString(m_transforms.dump(2)));
    m_editor->setMinimumHeight(90);
    textLayout->addWidget(m_editor, 1);
    auto* apply = new QPushButton(tr("Apply transforms"), textPage);
    apply->setObjectName(QStringLiteral("applyTransformsText"));
    textLayout->addWidget(apply);
    m_modes->addWidget(textPage);
    layout->addWidget(m_modes, 1);
    connect(m_textToggle, &QPushButton::toggled, this, &AugmentationPreview::setTextMode);
    connect(m_form, &TransformListEditor::transformsEdited, this, [this](const nlohmann::json& transforms) {
        m_transforms = transforms;
        m_editor->setPlainText(QString::fromStdString(m_transforms.dump(2)));
        emit transformsChanged();
        start();
    });
    connect(again, &QPushButton::clicked, this, [this] {
        ++m_seed;
        start();
    });
    connect(apply, &QPushButton::clicked, this, &AugmentationPreview::applyEditedTransforms);
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, [this] {
        const Outcome out = m_watcher.result();
        m_images = out.images;
        m_error = out.error;
        for (int i = 0; i < m_tiles.size(); ++i) {
            if (i < m_images.size())
                m_tiles[i]->setPixmap(QPixmap::fromImage(m_images[i].scaled(
                    kTile - 4, kTile - 4, Qt::KeepAspectRatio,
                    m_images[i].width() < kTile / 2 ? Qt::FastTransformation : Qt::SmoothTransformation)));
            else
                m_tiles[i]->clear();
        }
        m_status->setText(m_error.isEmpty()
                              ? tr("Each picture is one pass of the sample through the transforms.")
                              : m_error);
        emit previewUpdated();
        if (m_rerun) {
            m_rerun = false;
            start();
        }
    });
}

AugmentationPreview::~AugmentationPreview() {
    m_watcher.waitForFinished();
}

void AugmentationPreview::setTextMode(bool text) {
    m_modes->setCurrentIndex(text ? 1 : 0);
    if (m_textToggle->isChecked() != text) m_textToggle->setChecked(text);
}

bool AugmentationPreview::textMode() const { return m_modes->currentIndex() == 1; }

void AugmentationPreview::setTransforms(const nlohmann::json& transforms) {
    m_transforms = transforms.is_array() ? transforms : defaultTransforms();
    m_editor->setPlainText(QString::fromStdString(m_transforms.dump(2)));
    m_form->setTransforms(m_transforms);
    emit transformsChanged();
    start();
}

void AugmentationPreview::applyEditedTransforms() {
    auto parsed = engine::parseJsonChecked(m_editor->toPlainText().toStdString(), engine::JsonLimits{size_t(16) << 20, 32, 0},
                                           "transforms");
    if (!parsed || !parsed->is_array()) {
        m_status->setText(tr("The transforms must be a JSON array of objects, each with a \"type\"."));
        return;
    }
    m_transforms = std::move(*parsed);
    m_form->setTransforms(m_transforms);
    emit transformsChanged();
    start();
}

void AugmentationPreview::setSamplePath(const QString& path) {
    m_path = path;
    start();
}

void AugmentationPreview::start() {
    if (m_watcher.isRunning()) {
        m_rerun = true;  // latest wins: run again with the newest settings when this one ends
        return;
    }
    if (m_path.isEmpty()) {
        for (QLabel* t : m_tiles) t->clear();
        m_images.clear();
        m_status->setText(tr("Select a sample to see it augmented."));
        return;
    }
    m_status->setText(tr("Working…"));
    m_watcher.setFuture(QtConcurrent::run(&AugmentationPreview::run, m_path, m_transforms, m_seed));
}

AugmentationPreview::Outcome AugmentationPreview::run(const QString& path, const nlohmann::json& transforms,
                                                      quint64 seed) {
    Outcome out;
    auto pictures = engine::api::augmentPicture(path.toStdString(), transforms, seed, kVariants);
    if (!pictures.ok()) {
        const engine::Error& e = pictures.error();
        out.error = e.code == engine::ErrorCode::ConfigError ? tr("Transforms: %1").arg(QString::fromStdString(e.toString()))
                                                             : QString::fromStdString(e.toString());
        return out;
    }
    for (auto& picture : *pictures) out.images.append(imageFromPicture(std::move(picture)));
    return out;
}

}  // namespace kiln::ui
