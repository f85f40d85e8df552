// kiln-test-libs: kiln_optim
// SPDX-License-Identifier: Apache-2.0
// Learning-rate schedules against the Keras formulas, warm-up, and validation errors.
#include <QtTest>

#include <cmath>
#include <numbers>

#include "engine/optim/schedule.h"

using namespace kiln::engine;
using namespace kiln::engine::optim;

namespace {

bool near(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestSchedule : public QObject {
    Q_OBJECT

private slots:
    void constant() {
        ScheduleConfig s;
        s.initial = 0.02;
        QVERIFY(s.validate().ok());
        for (int64_t step : {0, 1, 100, 100000}) QCOMPARE(s.lrAt(step), 0.02);
    }

    void stepDecay() {
        ScheduleConfig s;
        s.type = "step";
        s.initial = 0.1;
        s.stepSize = 10;
        s.gamma = 0.5;
        QVERIFY(s.validate().ok());
        QVERIFY(near(s.lrAt(0), 0.1));
        QVERIFY(near(s.lrAt(9), 0.1));
        QVERIFY(near(s.lrAt(10), 0.05));
        QVERIFY(near(s.lrAt(25), 0.025));
        QVERIFY(near(s.lrAt(100), 0.1 * std::pow(0.5, 10)));
    }

    void exponential() {
        ScheduleConfig s;
        s.type = "exponential";
        s.initial = 0.1;
        s.decaySteps = 100;
        s.decayRate = 0.96;
        QVERIFY(s.validate().ok());
        for (int64_t step : {0, 1, 50, 100, 150, 1000})
            QVERIFY(near(s.lrAt(step), 0.1 * std::pow(0.96, step / 100.0)));
        s.staircase = true;
        QVERIFY(near(s.lrAt(50), 0.1));
        QVERIFY(near(s.lrAt(99), 0.1));
        QVERIFY(near(s.lrAt(100), 0.096));
        QVERIFY(near(s.lrAt(250), 0.1 * 0.96 * 0.96));
    }

    void cosine() {
        ScheduleConfig s;
        s.type = "cosine";
        s.initial = 0.1;
        s.decaySteps = 1000;
        s.alpha = 0.1;
        QVERIFY(s.validate().ok());
        auto want = [](double step) {
            const double t = std::min(step, 1000.0) / 1000.0;
            return 0.1 * ((1 - 0.1) * 0.5 * (1 + std::cos(std::numbers::pi * t)) + 0.1);
        };
        for (int64_t step : {0, 1, 250, 500, 999, 1000, 5000}) QVERIFY(near(s.lrAt(step), want(step)));
        QVERIFY(near(s.lrAt(0), 0.1));
        QVERIFY(near(s.lrAt(500), 0.1 * (0.9 * 0.5 + 0.1)));
        QVERIFY(near(s.lrAt(1000), 0.01));
        QVERIFY(near(s.lrAt(123456), 0.01));
    }

    void warmup() {
        ScheduleConfig s;
        s.type = "cosine";
        s.initial = 0.1;
        s.decaySteps = 100;
        s.warmupSteps = 10;
        QVERIFY(s.validate().ok());
        QVERIFY(near(s.lrAt(0), 0.0));
        QVERIFY(near(s.lrAt(1), 0.01));
        QVERIFY(near(s.lrAt(5), 0.05));
        QVERIFY(near(s.lrAt(10), 0.1));  // warm-up done: the cosine starts from its step 0
        QVERIFY(near(s.lrAt(60), 0.1 * 0.5 * (1 + std::cos(std::numbers::pi * 0.5))));
        QVERIFY(near(s.lrAt(110), 0.0));

        s.warmupStart = 0.02;
        QVERIFY(near(s.lrAt(0), 0.02));
        QVERIFY(near(s.lrAt(5), 0.02 + 0.08 * 0.5));

        ScheduleConfig e;
        e.type = "exponential";
        e.initial = 1.0;
        e.decaySteps = 10;
        e.decayRate = 0.5;
        e.warmupSteps = 4;
        QVERIFY(near(e.lrAt(2), 0.5));
        QVERIFY(near(e.lrAt(4), 1.0));
        QVERIFY(near(e.lrAt(14), 0.5));

        ScheduleConfig c;
        c.initial = 0.3;
        c.warmupSteps = 3;
        QVERIFY(near(c.lrAt(0), 0.0));
        QVERIFY(near(c.lrAt(2), 0.2));
        QVERIFY(near(c.lrAt(3), 0.3));
    }

    void validation() {
        auto expectField = [](const ScheduleConfig& s, const char* field) {
            Status st = s.validate();
            QVERIFY(!st.ok());
            QCOMPARE(st.error().code, ErrorCode::ConfigError);
            QCOMPARE(QString::fromStdString(st.error().param("field")), QString::fromLatin1(field));
            QVERIFY(st.error().message.find(field) != std::string::npos);
        };
        ScheduleConfig s;
        s.type = "polynomial";
        expectField(s, "schedule.type");
        s = ScheduleConfig{};
        s.initial = 0;
        expectField(s, "schedule.initial_learning_rate");
        s = ScheduleConfig{};
        s.type = "step";
        expectField(s, "schedule.step_size");
        s.stepSize = 5;
        s.gamma = 0;
        expectField(s, "schedule.gamma");
        s = ScheduleConfig{};
        s.type = "exponential";
        expectField(s, "schedule.decay_steps");
        s.decaySteps = 10;
        s.decayRate = -1;
        expectField(s, "schedule.decay_rate");
        s = ScheduleConfig{};
        s.type = "cosine";
        s.decaySteps = 10;
        s.alpha = 1.5;
        expectField(s, "schedule.alpha");
        s = ScheduleConfig{};
        s.warmupSteps = -1;
        expectField(s, "schedule.warmup_steps");
        s = ScheduleConfig{};
        s.type = "Cosine";
        s.decaySteps = 10;
        QVERIFY(s.validate().ok());
    }
};

QTEST_APPLESS_MAIN(TestSchedule)
#include "tst_schedule.moc"
