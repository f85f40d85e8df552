// SPDX-License-Identifier: Apache-2.0
// Where the tests find Kiln's data cache (tools/fetch_data.sh fills it), and small projects over
// the data sets in it that several tests train.
#pragma once

#include <QDir>
#include <QString>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"

namespace kiln::test {

// $KILN_DATA, else ~/.cache/kiln/data.
inline QString dataDir() {
    const QString env = qEnvironmentVariable("KILN_DATA");
    return env.isEmpty() ? QDir::homePath() + QStringLiteral("/.cache/kiln/data") : env;
}

// A small classifier of the iris table (4 features, 8 hidden units, 3 classes, SGD), 20 % held
// out for validation. An empty project when the file cannot be parsed.
inline engine::io::Project irisProject(const std::string& name, int epochs, int batchSize, double learningRate) {
    const nlohmann::json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", name},
        {"graph",
         {{"nodes",
           nlohmann::json::array(
               {{{"name", "features"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                {{"name", "hidden"}, {"op", "Dense"}, {"inputs", {"features"}}, {"attrs", {{"units", 8}, {"activation", "relu"}}}},
                {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"hidden"}}, {"attrs", {{"units", 3}}}}})},
          {"outputs", {"logits"}}}},
        {"data",
         {{"format", "csv"},
          {"path", (dataDir() + QStringLiteral("/sklearn/iris.csv")).toStdString()},
          {"skip_rows", 1},
          {"header", false},
          {"label_column", -1},
          {"standardize", true},
          {"split", {{"validation", 0.2}, {"test", 0.0}}},
          {"inputs", {{"features", "features"}}}}},
        {"training",
         {{"epochs", epochs},
          {"batch_size", batchSize},
          {"seed", 3},
          {"optimizer", {{"type", "sgd"}, {"learning_rate", learningRate}}},
          {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
          {"metrics", {"accuracy"}}}}};
    auto p = engine::io::parseProject(j.dump(), name + ".kiln");
    return p.ok() ? p.value() : engine::io::Project{};
}

}  // namespace kiln::test
