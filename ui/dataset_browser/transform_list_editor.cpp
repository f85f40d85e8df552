// SPDX-License-Identifier: Apache-2.0
// TransformListEditor: the transforms of the data section as a reorderable list with typed fields.
#include "ui/dataset_browser/transform_list_editor.h"

#include <QAbstractItemModel>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

#include "app/common/error_text.h"
#include "engine/api/datasets.h"
#include "ui/common/theme.h"

namespace kiln::ui {

using nlohmann::json;

namespace {

constexpr int kJsonRole = Qt::UserRole + 1;

// Settings each type may have (the engine's reader refuses others).
json defaults(const std::string& type) {
    if (type == "decode") return {{"type", type}, {"channels", 3}};
    if (type == "resize") return {{"type", type}, {"size", {224, 224}}};
    if (type == "center_crop") return {{"type", type}, {"size", {224, 224}}};
    if (type == "random_crop") return {{"type", type}, {"size", {28, 28}}, {"padding", 2}};
    if (type == "flip") return {{"type", type}, {"horizontal", true}, {"probability", 0.5}};
    if (type == "rotate") return {{"type", type}, {"degrees", 15}};
    if (type == "brightness_contrast") return {{"type", type}, {"brightness", 0.2}, {"contrast", 0.2}};
    if (type == "normalize") return {{"type", type}, {"preset", "unit"}};
    if (type == "standardize") return {{"type", type}, {"column", ""}};
    return {{"type", type}};
}

// Typed reads that fall back to `fallback` when the setting is missing or of another type (the
// engine's reader reports such a setting by name; the form must not fail on it).
int intOr(const json& j, const char* key, int fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int>() : fallback;
}
double realOr(const json& j, const char* key, double fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
bool boolOr(const json& j, const char* key, bool fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}
std::string textOr(const json& j, const char* key, const std::string& fallback = {}) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}
// The [low, high] of a rotation ("degrees": d is [-d, d]).
std::pair<double, double> rangeOf(const json& j) {
    if (j.contains("degrees") && j["degrees"].is_number()) return {-j["degrees"].get<double>(), j["degrees"].get<double>()};
    if (j.contains("range") && j["range"].is_array() && j["range"].size() == 2 && j["range"][0].is_number() &&
        j["range"][1].is_number())
        return {j["range"][0].get<double>(), j["range"][1].get<double>()};
    return {-15.0, 15.0};
}

// [height, width] of a "size" (a number means a square).
std::pair<int, int> sizeOf(const json& t) {
    const json s = t.value("size", json());
    if (s.is_number_integer()) return {s.get<int>(), s.get<int>()};
    if (s.is_array() && s.size() == 2 && s[0].is_number_integer() && s[1].is_number_integer())
        return {s[0].get<int>(), s[1].get<int>()};
    return {224, 224};
}

QString numbers(const json& j) {
    QStringList out;
    if (j.is_array())
        for (const json& v : j)
            if (v.is_number()) out << QString::number(v.get<double>());
    return out.join(QStringLiteral(", "));
}

}  // namespace

TransformListEditor::TransformListEditor(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout;
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("transformList"));
    m_list->setDragDropMode(QAbstractItemView::InternalMove);
    m_list->setDefaultDropAction(Qt::MoveAction);
    m_list->setMinimumHeight(120);
    top->addWidget(m_list, 1);
    auto* buttons = new QVBoxLayout;
    m_add = new QToolButton(this);
    m_add->setObjectName(QStringLiteral("addTransform"));
    m_add->setPopupMode(QToolButton::InstantPopup);
    m_add->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_add->setMenu(new QMenu(m_add));
    m_remove = new QPushButton(this);
    m_remove->setObjectName(QStringLiteral("removeTransform"));
    m_up = new QPushButton(this);
    m_up->setObjectName(QStringLiteral("moveTransformUp"));
    m_down = new QPushButton(this);
    m_down->setObjectName(QStringLiteral("moveTransformDown"));
    for (QWidget* b : {static_cast<QWidget*>(m_add), static_cast<QWidget*>(m_remove), static_cast<QWidget*>(m_up),
                       static_cast<QWidget*>(m_down)}) {
        b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        buttons->addWidget(b);
    }
    buttons->addStretch(1);
    top->addLayout(buttons);
    layout->addLayout(top);
    m_formTitle = new QLabel(this);
    m_formTitle->setObjectName(QStringLiteral("transformTitle"));
    QFont bold = m_formTitle->font();
    bold.setBold(true);
    m_formTitle->setFont(bold);
    layout->addWidget(m_formTitle);
    m_formHost = new QWidget(this);
    m_form = new QFormLayout(m_formHost);
    m_form->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_formHost);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("transformError"));
    m_error->setWordWrap(true);
    Theme::markAsError(m_error);
    m_error->hide();
    layout->addWidget(m_error);

    connect(m_list, &QListWidget::currentRowChanged, this, [this] { rebuildForm(); });
    connect(m_list->model(), &QAbstractItemModel::rowsMoved, this, [this] {
        if (!m_building) listChanged();
    });
    connect(m_remove, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        if (row < 0) return;
        delete m_list->takeItem(row);
        m_list->setCurrentRow(std::min(row, m_list->count() - 1));
        listChanged();
    });
    auto move = [this](int delta) {
        const int row = m_list->currentRow();
        const int to = row + delta;
        if (row < 0 || to < 0 || to >= m_list->count()) return;
        m_building = true;
        QListWidgetItem* item = m_list->takeItem(row);
        m_list->insertItem(to, item);
        m_list->setCurrentRow(to);
        m_building = false;
        listChanged();
    };
    connect(m_up, &QPushButton::clicked, this, [move] { move(-1); });
    connect(m_down, &QPushButton::clicked, this, [move] { move(1); });
    retranslate();
}

QStringList TransformListEditor::types() {
    return {QStringLiteral("decode"), QStringLiteral("resize"), QStringLiteral("center_crop"), QStringLiteral("random_crop"),
            QStringLiteral("flip"), QStringLiteral("rotate"), QStringLiteral("brightness_contrast"),
            QStringLiteral("normalize"), QStringLiteral("standardize")};
}

QString TransformListEditor::typeTitle(const std::string& type) const {
    if (type == "decode") return tr("Decode");
    if (type == "resize") return tr("Resize");
    if (type == "center_crop") return tr("Centre crop");
    if (type == "random_crop") return tr("Random crop");
    if (type == "flip") return tr("Flip");
    if (type == "rotate") return tr("Rotate");
    if (type == "brightness_contrast") return tr("Brightness and contrast");
    if (type == "normalize") return tr("Normalise");
    if (type == "standardize") return tr("Standardise a column");
    return QString::fromStdString(type);
}

QString TransformListEditor::summary(const json& t) const {
    const std::string type = textOr(t, "type");
    QString detail;
    if (type == "decode") {
        const int c = intOr(t, "channels", 0);
        detail = c == 1 ? tr("grey") : c == 3 ? tr("RGB") : tr("as stored");
    } else if (type == "resize") {
        if (t.contains("shorter_side"))
            detail = tr("shorter side %1").arg(intOr(t, "shorter_side", 0));
        else
            detail = QStringLiteral("%1 × %2").arg(sizeOf(t).first).arg(sizeOf(t).second);
    } else if (type == "center_crop" || type == "random_crop") {
        detail = QStringLiteral("%1 × %2").arg(sizeOf(t).first).arg(sizeOf(t).second);
        if (type == "random_crop" && intOr(t, "padding", 0) > 0) detail += tr(", padding %1").arg(intOr(t, "padding", 0));
    } else if (type == "flip") {
        QStringList axes;
        if (boolOr(t, "horizontal", true)) axes << tr("horizontal");
        if (boolOr(t, "vertical", false)) axes << tr("vertical");
        detail = tr("%1, p = %2").arg(axes.join(QStringLiteral(" + ")), QString::number(realOr(t, "probability", 0.5)));
    } else if (type == "rotate") {
        const auto [lo, hi] = rangeOf(t);
        detail = lo == -hi ? QStringLiteral("±%1°").arg(hi) : QStringLiteral("%1° … %2°").arg(lo).arg(hi);
    } else if (type == "brightness_contrast") {
        detail = tr("brightness ±%1, contrast ±%2")
                     .arg(QString::number(realOr(t, "brightness", 0.0)), QString::number(realOr(t, "contrast", 0.0)));
    } else if (type == "normalize") {
        detail = t.contains("preset") && t["preset"].is_string() ? QString::fromStdString(t["preset"].get<std::string>())
                                                                 : tr("custom");
    } else if (type == "standardize") {
        detail = QString::fromStdString(textOr(t, "column"));
    }
    return detail.isEmpty() ? typeTitle(type) : tr("%1 — %2").arg(typeTitle(type), detail);
}

json TransformListEditor::itemJson(const QListWidgetItem* item) const {
    json j = json::parse(item->data(kJsonRole).toString().toStdString(), nullptr, false);
    return j.is_object() ? j : json::object();
}

void TransformListEditor::setItemJson(QListWidgetItem* item, const json& t) {
    item->setData(kJsonRole, QString::fromStdString(t.dump()));
    item->setText(summary(t));
}

void TransformListEditor::setTransforms(const json& transforms) {
    m_building = true;
    const int row = m_list->currentRow();
    m_list->clear();
    if (transforms.is_array())
        for (const json& t : transforms) {
            auto* item = new QListWidgetItem(m_list);
            item->setFlags(item->flags() | Qt::ItemIsDragEnabled);
            setItemJson(item, t.is_object() ? t : json::object());
        }
    m_building = false;
    m_list->setCurrentRow(m_list->count() == 0 ? -1 : std::clamp(row, 0, m_list->count() - 1));
    rebuildForm();
    const engine::Status checked = engine::api::checkTransforms(this->transforms());
    m_error->setVisible(!checked.ok());
    if (!checked.ok()) m_error->setText(app::ErrorText::describe(checked.error()));
}

json TransformListEditor::transforms() const {
    json out = json::array();
    for (int i = 0; i < m_list->count(); ++i) out.push_back(itemJson(m_list->item(i)));
    return out;
}

QString TransformListEditor::errorText() const { return m_error->isVisible() ? m_error->text() : QString(); }

void TransformListEditor::addTransform(const QString& type) {
    auto* item = new QListWidgetItem(m_list);
    setItemJson(item, defaults(type.toStdString()));
    m_list->setCurrentItem(item);
    listChanged();
}

void TransformListEditor::listChanged() {
    const json list = transforms();
    const engine::Status checked = engine::api::checkTransforms(list);
    m_error->setVisible(!checked.ok());
    if (!checked.ok()) {
        m_error->setText(app::ErrorText::describe(checked.error()));
        return;
    }
    emit transformsEdited(list);
}

void TransformListEditor::editCurrent(const std::function<void(json&)>& edit) {
    if (m_building) return;
    QListWidgetItem* item = m_list->currentItem();
    if (!item) return;
    json t = itemJson(item);
    edit(t);
    setItemJson(item, t);
    listChanged();
}

void TransformListEditor::rebuildForm() {
    if (m_building) return;
    m_building = true;
    while (m_form->rowCount() > 0) m_form->removeRow(0);
    m_fields.clear();
    QListWidgetItem* item = m_list->currentItem();
    m_remove->setEnabled(item != nullptr);
    m_up->setEnabled(item && m_list->currentRow() > 0);
    m_down->setEnabled(item && m_list->currentRow() + 1 < m_list->count());
    if (!item) {
        m_formTitle->setText(m_list->count() == 0 ? tr("No transforms: the samples are used as they are.") : QString());
        m_building = false;
        return;
    }
    const json t = itemJson(item);
    const std::string type = textOr(t, "type");
    m_formTitle->setText(typeTitle(type));

    auto intField = [&](const QString& key, const QString& label, int value, int lo, int hi, auto write) {
        auto* spin = new QSpinBox(m_formHost);
        spin->setObjectName(QStringLiteral("field_") + key);
        spin->setRange(lo, hi);
        spin->setValue(value);
        connect(spin, &QSpinBox::valueChanged, this, [this, write](int v) { editCurrent([&](json& j) { write(j, v); }); });
        m_form->addRow(label, spin);
        m_fields.insert(key, spin);
        return spin;
    };
    auto realField = [&](const QString& key, const QString& label, double value, double lo, double hi, double step,
                         int decimals, auto write) {
        auto* spin = new QDoubleSpinBox(m_formHost);
        spin->setObjectName(QStringLiteral("field_") + key);
        spin->setRange(lo, hi);
        spin->setDecimals(decimals);
        spin->setSingleStep(step);
        spin->setValue(value);
        connect(spin, &QDoubleSpinBox::valueChanged, this,
                [this, write](double v) { editCurrent([&](json& j) { write(j, v); }); });
        m_form->addRow(label, spin);
        m_fields.insert(key, spin);
        return spin;
    };
    auto choiceField = [&](const QString& key, const QString& label, const QList<QPair<QString, QVariant>>& choices,
                           const QVariant& current, auto write) {
        auto* combo = new QComboBox(m_formHost);
        combo->setObjectName(QStringLiteral("field_") + key);
        for (const auto& [text, data] : choices) combo->addItem(text, data);
        combo->setCurrentIndex(std::max(0, combo->findData(current)));
        connect(combo, &QComboBox::currentIndexChanged, this,
                [this, combo, write](int) { editCurrent([&](json& j) { write(j, combo->currentData()); }); });
        m_form->addRow(label, combo);
        m_fields.insert(key, combo);
        return combo;
    };
    auto checkField = [&](const QString& key, const QString& label, bool value, auto write) {
        auto* box = new QCheckBox(label, m_formHost);
        box->setObjectName(QStringLiteral("field_") + key);
        box->setChecked(value);
        connect(box, &QCheckBox::toggled, this, [this, write](bool on) { editCurrent([&](json& j) { write(j, on); }); });
        m_form->addRow(QString(), box);
        m_fields.insert(key, box);
        return box;
    };
    auto textField = [&](const QString& key, const QString& label, const QString& value, const QString& hint, auto write) {
        auto* edit = new QLineEdit(value, m_formHost);
        edit->setObjectName(QStringLiteral("field_") + key);
        edit->setPlaceholderText(hint);
        connect(edit, &QLineEdit::editingFinished, this,
                [this, edit, write] { editCurrent([&](json& j) { write(j, edit->text().trimmed()); }); });
        m_form->addRow(label, edit);
        m_fields.insert(key, edit);
        return edit;
    };
    auto writeSize = [](json& j, int h, int w) { j["size"] = json::array({h, w}); };
    const QList<QPair<QString, QVariant>> interpolations = {
        {tr("nearest"), QStringLiteral("nearest")}, {tr("bilinear"), QStringLiteral("bilinear")},
        {tr("area"), QStringLiteral("area")}, {tr("bicubic"), QStringLiteral("bicubic")}};
    const QString interpolation = t.contains("interpolation") && t["interpolation"].is_string()
                                      ? QString::fromStdString(t["interpolation"].get<std::string>())
                                      : QStringLiteral("bilinear");
    auto writeInterpolation = [](json& j, const QVariant& v) { j["interpolation"] = v.toString().toStdString(); };

    if (type == "decode") {
        choiceField(QStringLiteral("channels"), tr("Channels"),
                    {{tr("as stored"), 0}, {tr("grey (1)"), 1}, {tr("RGB (3)"), 3}}, intOr(t, "channels", 0),
                    [](json& j, const QVariant& v) { j["channels"] = v.toInt(); });
    } else if (type == "resize") {
        const bool shorter = t.contains("shorter_side");
        auto* mode = choiceField(QStringLiteral("mode"), tr("Resize to"),
                                 {{tr("height × width"), QStringLiteral("size")},
                                  {tr("shorter side (keeps the aspect)"), QStringLiteral("shorter_side")}},
                                 shorter ? QStringLiteral("shorter_side") : QStringLiteral("size"),
                                 [](json& j, const QVariant& v) {
                                     if (v.toString() == QLatin1String("size")) {
                                         const int s = intOr(j, "shorter_side", 224);
                                         j.erase("shorter_side");
                                         j["size"] = json::array({s, s});
                                     } else {
                                         j["shorter_side"] = sizeOf(j).first;
                                         j.erase("size");
                                     }
                                 });
        connect(mode, &QComboBox::currentIndexChanged, this,
                [this] { QMetaObject::invokeMethod(this, [this] { rebuildForm(); }, Qt::QueuedConnection); });
        const auto [h, w] = sizeOf(t);
        if (shorter) {
            intField(QStringLiteral("shorter_side"), tr("Shorter side (px)"), intOr(t, "shorter_side", 224), 1, 16384,
                     [](json& j, int v) { j["shorter_side"] = v; });
        } else {
            intField(QStringLiteral("height"), tr("Height (px)"), h, 1, 16384,
                     [writeSize](json& j, int v) { writeSize(j, v, sizeOf(j).second); });
            intField(QStringLiteral("width"), tr("Width (px)"), w, 1, 16384,
                     [writeSize](json& j, int v) { writeSize(j, sizeOf(j).first, v); });
        }
        choiceField(QStringLiteral("interpolation"), tr("Interpolation"), interpolations, interpolation, writeInterpolation);
    } else if (type == "center_crop" || type == "random_crop") {
        const auto [h, w] = sizeOf(t);
        intField(QStringLiteral("height"), tr("Height (px)"), h, 1, 16384,
                 [writeSize](json& j, int v) { writeSize(j, v, sizeOf(j).second); });
        intField(QStringLiteral("width"), tr("Width (px)"), w, 1, 16384,
                 [writeSize](json& j, int v) { writeSize(j, sizeOf(j).first, v); });
        if (type == "random_crop")
            intField(QStringLiteral("padding"), tr("Zero padding (px)"), intOr(t, "padding", 0), 0, 4096,
                     [](json& j, int v) { j["padding"] = v; });
    } else if (type == "flip") {
        checkField(QStringLiteral("horizontal"), tr("Horizontal (left–right)"), boolOr(t, "horizontal", true),
                   [](json& j, bool on) { j["horizontal"] = on; });
        checkField(QStringLiteral("vertical"), tr("Vertical (upside down)"), boolOr(t, "vertical", false),
                   [](json& j, bool on) { j["vertical"] = on; });
        realField(QStringLiteral("probability"), tr("Probability"), realOr(t, "probability", 0.5), 0.0, 1.0, 0.05, 2,
                  [](json& j, double v) { j["probability"] = v; });
    } else if (type == "rotate") {
        const auto [lo, hi] = rangeOf(t);
        // A symmetric range is written as "degrees", any other as "range".
        auto writeRange = [](json& j, double a, double b) {
            j.erase("degrees");
            j.erase("range");
            if (a == -b && b >= 0)
                j["degrees"] = b;
            else
                j["range"] = json::array({a, b});
        };
        realField(QStringLiteral("min_degrees"), tr("From (degrees)"), lo, -180.0, 180.0, 1.0, 1,
                  [writeRange](json& j, double v) { writeRange(j, v, rangeOf(j).second); });
        realField(QStringLiteral("max_degrees"), tr("To (degrees)"), hi, -180.0, 180.0, 1.0, 1,
                  [writeRange](json& j, double v) { writeRange(j, rangeOf(j).first, v); });
        realField(QStringLiteral("fill"), tr("Fill value of the corners"), realOr(t, "fill", 0.0), -1e6, 1e6, 1.0, 2,
                  [](json& j, double v) { j["fill"] = v; });
        choiceField(QStringLiteral("interpolation"), tr("Interpolation"), interpolations, interpolation, writeInterpolation);
    } else if (type == "brightness_contrast") {
        realField(QStringLiteral("brightness"), tr("Brightness (± fraction)"), realOr(t, "brightness", 0.0), 0.0, 1.0, 0.05, 2,
                  [](json& j, double v) { j["brightness"] = v; });
        realField(QStringLiteral("contrast"), tr("Contrast (± fraction)"), realOr(t, "contrast", 0.0), 0.0, 1.0, 0.05, 2,
                  [](json& j, double v) { j["contrast"] = v; });
    } else if (type == "normalize") {
        const QString preset = t.contains("preset") && t["preset"].is_string()
                                   ? QString::fromStdString(t["preset"].get<std::string>())
                                   : QString();
        auto* presetBox = choiceField(QStringLiteral("preset"), tr("Preset"),
                    {{tr("custom scale, mean and std"), QString()},
                     {tr("unit: x/255 → [0, 1]"), QStringLiteral("unit")},
                     {tr("imagenet: x/255, ImageNet mean and std"), QStringLiteral("imagenet")},
                     {tr("symmetric: x/127.5 − 1 → [−1, 1]"), QStringLiteral("symmetric")},
                     {tr("centered: (x − 127) / 128"), QStringLiteral("centered")}},
                    preset, [](json& j, const QVariant& v) {
                        if (v.toString().isEmpty()) {
                            j.erase("preset");
                            j["scale"] = 1.0 / 255.0;
                            j["mean"] = json::array({0.0});
                            j["std"] = json::array({1.0});
                        } else {
                            j.erase("scale");
                            j.erase("mean");
                            j.erase("std");
                            j["preset"] = v.toString().toStdString();
                        }
                    });
        connect(presetBox, &QComboBox::currentIndexChanged, this,
                [this] { QMetaObject::invokeMethod(this, [this] { rebuildForm(); }, Qt::QueuedConnection); });
        if (preset.isEmpty()) {
            realField(QStringLiteral("scale"), tr("Scale"), realOr(t, "scale", 1.0 / 255.0), -1e6, 1e6, 0.001, 6,
                      [](json& j, double v) { j["scale"] = v; });
            auto writeList = [](const char* key) {
                return [key](json& j, const QString& text) {
                    json values = json::array();
                    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                        bool ok = false;
                        const double v = part.trimmed().toDouble(&ok);
                        if (ok) values.push_back(v);
                        else values.push_back(part.trimmed().toStdString());  // the reader names the field
                    }
                    j[key] = values;
                };
            };
            textField(QStringLiteral("mean"), tr("Mean (per channel)"), numbers(t.contains("mean") ? t["mean"] : json::array({0.0})),
                      tr("e.g. 0.485, 0.456, 0.406"), writeList("mean"));
            textField(QStringLiteral("std"), tr("Standard deviation (per channel)"), numbers(t.contains("std") ? t["std"] : json::array({1.0})),
                      tr("e.g. 0.229, 0.224, 0.225"), writeList("std"));
        }
    }
    // Every transform may name its column; standardize must.
    textField(QStringLiteral("column"), type == "standardize" ? tr("Numeric column") : tr("Column"),
              QString::fromStdString(textOr(t, "column")),
              type == "standardize" ? tr("the column to standardise") : tr("empty: every image column"),
              [type](json& j, const QString& text) {
                  if (text.isEmpty() && type != "standardize") j.erase("column");
                  else j["column"] = text.toStdString();
              });
    m_building = false;
}

void TransformListEditor::retranslate() {
    m_add->setText(tr("Add ▾"));
    m_add->setToolTip(tr("Add a transform at the end of the list"));
    m_remove->setText(tr("Remove"));
    m_up->setText(tr("Move up"));
    m_down->setText(tr("Move down"));
    m_list->setToolTip(tr("The transforms run from top to bottom; drag to reorder."));
    QMenu* menu = m_add->menu();
    menu->clear();
    for (const QString& type : types()) {
        QAction* a = menu->addAction(typeTitle(type.toStdString()));
        a->setObjectName(QStringLiteral("add_") + type);
        connect(a, &QAction::triggered, this, [this, type] { addTransform(type); });
    }
    m_building = true;
    for (int i = 0; i < m_list->count(); ++i) setItemJson(m_list->item(i), itemJson(m_list->item(i)));
    m_building = false;
    rebuildForm();
}

void TransformListEditor::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace kiln::ui
