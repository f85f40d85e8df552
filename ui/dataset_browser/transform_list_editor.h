// SPDX-License-Identifier: Apache-2.0
// The data section's transforms as a form: an ordered list (add, remove, move up/down or drag)
// and, for the selected transform, typed fields for its settings. Every edit is checked with the
// engine's own reader; a valid list is announced, an invalid one shows the reader's message (which
// names the field, e.g. data.transforms[2].size) and is not passed on.
#pragma once

#include <nlohmann/json.hpp>

#include <QHash>
#include <QStringList>
#include <QWidget>

#include <functional>

class QFormLayout;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QToolButton;

namespace kiln::ui {

class TransformListEditor : public QWidget {
    Q_OBJECT
public:
    explicit TransformListEditor(QWidget* parent = nullptr);

    // Shows a "transforms" array (settings the form has no field for are kept as they are).
    void setTransforms(const nlohmann::json& transforms);
    nlohmann::json transforms() const;

    // The transform types in the Add menu: "decode", "resize", ... (the project file's names).
    static QStringList types();
    // Appends a transform of `type` with sensible settings and selects it.
    void addTransform(const QString& type);

    QListWidget* list() const { return m_list; }
    // The field for `key` of the selected transform ("probability", "height", "preset", ...).
    QWidget* field(const QString& key) const { return m_fields.value(key); }
    QString errorText() const;

signals:
    // After each edit that leaves a valid list.
    void transformsEdited(const nlohmann::json& transforms);

protected:
    void changeEvent(QEvent* event) override;

private:
    QString typeTitle(const std::string& type) const;
    QString summary(const nlohmann::json& t) const;
    nlohmann::json itemJson(const QListWidgetItem* item) const;
    void setItemJson(QListWidgetItem* item, const nlohmann::json& t);
    void rebuildForm();
    void editCurrent(const std::function<void(nlohmann::json&)>& edit);
    void listChanged();
    void retranslate();

    QListWidget* m_list = nullptr;
    QToolButton* m_add = nullptr;
    QPushButton* m_remove = nullptr;
    QPushButton* m_up = nullptr;
    QPushButton* m_down = nullptr;
    QWidget* m_formHost = nullptr;
    QFormLayout* m_form = nullptr;
    QLabel* m_formTitle = nullptr;
    QLabel* m_error = nullptr;
    QHash<QString, QWidget*> m_fields;
    bool m_building = false;
};

}  // namespace kiln::ui
