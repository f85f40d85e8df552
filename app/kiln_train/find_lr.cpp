// SPDX-License-Identifier: Apache-2.0
// kiln-train --find-lr: runs api::findLearningRate with progress on stderr and prints the curve.
#include "app/kiln_train/find_lr.h"

#include <QCoreApplication>

#include <nlohmann/json.hpp>

#include "app/common/cli.h"

namespace kiln::app {

namespace {
class FindLr {
    Q_DECLARE_TR_FUNCTIONS(FindLr)
};

QString rate(double v) { return QString::number(v, 'e', 3); }
}  // namespace

int runFindLr(const engine::io::Project& project, const std::string& projectPath,
              const engine::api::LrFinderRequest& request, bool json, bool quiet) {
    using namespace kiln::engine;
    int shown = 0;
    auto progress = [&](const api::LrFinderPoint& p) {
        if (quiet || json) return;
        if (shown++ == 0) printOut(QStringLiteral("%1 %2 %3").arg(FindLr::tr("learning rate"), 14).arg(FindLr::tr("loss"), 12).arg(FindLr::tr("smoothed"), 12));
        printOut(QStringLiteral("%1 %2 %3").arg(rate(p.lr), 14).arg(p.loss, 12, 'f', 5).arg(p.smoothed, 12, 'f', 5));
    };
    auto result = api::findLearningRate(project, projectPath, request, progress);
    if (!result.ok()) return reportError(QStringLiteral("kiln-train"), result.error(), &project);
    const auto& r = *result;
    if (json) {
        nlohmann::json points = nlohmann::json::array();
        for (const auto& p : r.points) points.push_back({{"lr", p.lr}, {"loss", p.loss}, {"smoothed", p.smoothed}});
        nlohmann::json out{{"points", points},   {"suggested_lr", r.suggestedLr}, {"rule", r.rule},
                           {"min_loss_lr", r.minLossLr}, {"diverged", r.diverged}};
        printOut(QString::fromStdString(out.dump()));
        return 0;
    }
    if (r.points.empty()) {
        printOut(FindLr::tr("No step was run."));
        return 0;
    }
    if (r.diverged) printOut(FindLr::tr("Stopped after %n step(s): the loss diverged.", nullptr, int(r.points.size())));
    printOut(FindLr::tr("Lowest smoothed loss at learning rate %1.").arg(rate(r.minLossLr)));
    printOut(r.rule == "steepest"
                 ? FindLr::tr("Suggested learning rate: %1 (where the smoothed loss falls fastest).").arg(rate(r.suggestedLr))
                 : FindLr::tr("Suggested learning rate: %1 (a tenth of the rate with the lowest loss; the loss never fell).")
                       .arg(rate(r.suggestedLr)));
    return 0;
}

}  // namespace kiln::app
