// SPDX-License-Identifier: Apache-2.0
// One sample through the configured transforms several times (each pass a different epoch, so
// random crops, flips and rotations differ), decoded and transformed off the GUI thread.
#pragma once

#include <nlohmann/json.hpp>

#include <QFutureWatcher>
#include <QImage>
#include <QVector>
#include <QWidget>

class QLabel;
class QGridLayout;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace kiln::engine::api {
struct DisplayPicture;
}

namespace kiln::ui {

class TransformListEditor;

// A picture of the engine's display form (8-bit grey, RGB or RGBA) as a QImage: a copy of its
// pixels, or, from an rvalue, the picture's own pixel buffer, which the QImage then owns.
QImage imageFromPicture(const engine::api::DisplayPicture& picture);
QImage imageFromPicture(engine::api::DisplayPicture&& picture);

class AugmentationPreview : public QWidget {
    Q_OBJECT
public:
    static constexpr int kVariants = 8;

    explicit AugmentationPreview(QWidget* parent = nullptr);
    ~AugmentationPreview() override;

    // The "transforms" array of the project's data section (see docs/project-format.md).
    void setTransforms(const nlohmann::json& transforms);
    nlohmann::json transforms() const { return m_transforms; }
    // The picture to augment; an empty path clears the preview.
    void setSamplePath(const QString& path);
    // A pleasant default for image classification: flips, small rotations, brightness/contrast.
    static nlohmann::json defaultTransforms();

    // The images of the last finished run (for tests), and its error text.
    const QVector<QImage>& images() const { return m_images; }
    // The form of the transforms, and whether the JSON text is shown instead ("Edit as text").
    TransformListEditor* form() const { return m_form; }
    void setTextMode(bool text);
    bool textMode() const;
    QString errorText() const { return m_error; }

signals:
    void transformsChanged();
    void previewUpdated();

private:
    struct Outcome {
        QVector<QImage> images;
        QString error;
    };
    static Outcome run(const QString& path, const nlohmann::json& transforms, quint64 seed);
    void start();
    void applyEditedTransforms();

    nlohmann::json m_transforms;
    QString m_path;
    quint64 m_seed = 1;
    QVector<QImage> m_images;
    QString m_error;
    bool m_rerun = false;
    QFutureWatcher<Outcome> m_watcher;
    QVector<QLabel*> m_tiles;
    QLabel* m_status;
    QPlainTextEdit* m_editor;
    TransformListEditor* m_form = nullptr;
    QStackedWidget* m_modes = nullptr;
    QPushButton* m_textToggle = nullptr;
};

}  // namespace kiln::ui
