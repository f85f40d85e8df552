// SPDX-License-Identifier: Apache-2.0
// Typed editors for an attribute schema (the settings of a loss term or of a plugin metric): a
// check box, spin box, list of choices or line per attribute, showing the value given or the
// default, each edit reported with the attribute and its new JSON value.
#pragma once

#include <nlohmann/json.hpp>

#include <QString>

#include <functional>
#include <vector>

#include "engine/graph/attr.h"

class QFormLayout;
class QWidget;

namespace kiln::ui::training {

// An attribute value as a training configuration writes it.
nlohmann::json attrJson(const engine::AttrValue& value);

using AttributeEdited = std::function<void(const engine::AttrSpec& spec, const nlohmann::json& value)>;

// Empties `form`, then adds one labelled editor per spec, named objectPrefix + the attribute's
// name, children of `host`; `values` (an object) holds the values set, the rest show their
// defaults. Edits call `edited` (a user's edit only: filling the form calls nothing).
void fillAttributeForm(QFormLayout* form, QWidget* host, const std::vector<engine::AttrSpec>& specs,
                       const nlohmann::json& values, const QString& objectPrefix, const AttributeEdited& edited);

// Writes `value` for `spec` into the object `settings`, leaving out a default (the file then says
// only what differs).
void setAttributeJson(nlohmann::json& settings, const engine::AttrSpec& spec, const nlohmann::json& value);

}  // namespace kiln::ui::training
