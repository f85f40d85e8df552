// SPDX-License-Identifier: Apache-2.0
// The attribute editors shared by the loss terms' and plugin metrics' settings.
#include "ui/training/attribute_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include <limits>

namespace kiln::ui::training {

using nlohmann::json;

json attrJson(const engine::AttrValue& value) {
    return std::visit([](const auto& x) { return json(x); }, value);
}

void setAttributeJson(json& settings, const engine::AttrSpec& spec, const json& value) {
    if (!spec.required && value == attrJson(spec.defaultValue))
        settings.erase(spec.name);
    else
        settings[spec.name] = value;
}

void fillAttributeForm(QFormLayout* form, QWidget* host, const std::vector<engine::AttrSpec>& specs,
                       const json& values, const QString& objectPrefix, const AttributeEdited& edited) {
    while (form->rowCount() > 0) form->removeRow(0);
    for (const auto& spec : specs) {
        const QString name = QString::fromStdString(spec.name);
        const QString doc = QString::fromStdString(spec.doc);
        const json current =
            values.is_object() && values.contains(spec.name) ? values[spec.name] : attrJson(spec.defaultValue);
        QWidget* editor = nullptr;
        switch (spec.type) {
        case engine::AttrType::Bool: {
            auto* box = new QCheckBox(host);
            box->setChecked(current.is_boolean() && current.get<bool>());
            QObject::connect(box, &QCheckBox::toggled, host, [edited, spec](bool on) { edited(spec, json(on)); });
            editor = box;
            break;
        }
        case engine::AttrType::Int: {
            auto* box = new QSpinBox(host);
            box->setRange(spec.min ? static_cast<int>(*spec.min) : std::numeric_limits<int>::min(),
                          spec.max ? static_cast<int>(*spec.max) : std::numeric_limits<int>::max());
            box->setKeyboardTracking(false);
            box->setValue(current.is_number() ? current.get<int>() : 0);
            QObject::connect(box, qOverload<int>(&QSpinBox::valueChanged), host,
                             [edited, spec](int v) { edited(spec, json(static_cast<int64_t>(v))); });
            editor = box;
            break;
        }
        case engine::AttrType::Float: {
            auto* box = new QDoubleSpinBox(host);
            box->setDecimals(6);
            box->setRange(spec.min ? *spec.min : -1e9, spec.max ? *spec.max : 1e9);
            box->setSingleStep(0.05);
            box->setKeyboardTracking(false);
            box->setValue(current.is_number() ? current.get<double>() : 0.0);
            QObject::connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged), host,
                             [edited, spec](double v) { edited(spec, json(v)); });
            editor = box;
            break;
        }
        case engine::AttrType::String: {
            if (!spec.choices.empty()) {
                auto* box = new QComboBox(host);
                for (const auto& c : spec.choices) box->addItem(QString::fromStdString(c));
                box->setCurrentText(
                    QString::fromStdString(current.is_string() ? current.get<std::string>() : std::string()));
                QObject::connect(box, &QComboBox::currentTextChanged, host,
                                 [edited, spec](const QString& v) { edited(spec, json(v.toStdString())); });
                editor = box;
            } else {
                auto* edit = new QLineEdit(host);
                edit->setText(QString::fromStdString(current.is_string() ? current.get<std::string>() : std::string()));
                QObject::connect(edit, &QLineEdit::editingFinished, host,
                                 [edited, spec, edit] { edited(spec, json(edit->text().toStdString())); });
                editor = edit;
            }
            break;
        }
        case engine::AttrType::IntList: {
            // Comma-separated integers; the engine's parser checks length and range.
            auto* edit = new QLineEdit(host);
            QStringList parts;
            if (current.is_array())
                for (const auto& v : current)
                    if (v.is_number_integer()) parts << QString::number(v.get<int64_t>());
            edit->setText(parts.join(QStringLiteral(", ")));
            QObject::connect(edit, &QLineEdit::editingFinished, host, [edited, spec, edit] {
                json list = json::array();
                for (const QString& p : edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
                    list.push_back(p.trimmed().toLongLong());
                edited(spec, list);
            });
            editor = edit;
            break;
        }
        }
        editor->setObjectName(objectPrefix + name);
        editor->setToolTip(doc);
        auto* label = new QLabel(name, host);
        label->setToolTip(doc);
        label->setBuddy(editor);
        form->addRow(label, editor);
    }
}

}  // namespace kiln::ui::training
