// SPDX-License-Identifier: Apache-2.0
// Dynamic loss scaling: overflowing steps are skipped and back off, clean streaks grow the scale
// within its bounds, unscaling detects inf and NaN, and a fp16-like training loop recovers.
// kiln-test-libs: kiln_optim
#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/optim/loss_scaler.h"

using namespace kiln::engine;
using namespace kiln::engine::optim;

class TestLossScaler : public QObject {
    Q_OBJECT

private slots:
    void overflowSkipsAndBacksOff() {
        LossScaler s;
        QCOMPARE(s.scale(), 65536.0f);
        QVERIFY(!s.update(false));
        QCOMPARE(s.scale(), 32768.0f);
        QVERIFY(!s.update(false));
        QCOMPARE(s.scale(), 16384.0f);
        QCOMPARE(s.skippedSteps(), int64_t{2});
        QVERIFY(s.update(true));
        QCOMPARE(s.scale(), 16384.0f);
    }

    void growsAfterInterval() {
        LossScalerConfig c;
        c.initialScale = 8;
        c.growthInterval = 3;
        c.maxScale = 32;
        LossScaler s(c);
        for (int i = 0; i < 2; ++i) QVERIFY(s.update(true));
        QCOMPARE(s.scale(), 8.0f);
        QVERIFY(s.update(true));
        QCOMPARE(s.scale(), 16.0f);
        for (int i = 0; i < 6; ++i) s.update(true);
        QCOMPARE(s.scale(), 32.0f);  // capped
        s.update(false);             // an overflow resets the streak
        QCOMPARE(s.cleanStreak(), int64_t{0});
        QCOMPARE(s.scale(), 16.0f);
    }

    void neverBelowMinimum() {
        LossScalerConfig c;
        c.initialScale = 4;
        c.minScale = 1;
        LossScaler s(c);
        for (int i = 0; i < 10; ++i) s.update(false);
        QCOMPARE(s.scale(), 1.0f);
    }

    void fixedScale() {
        LossScalerConfig c;
        c.dynamic = false;
        c.initialScale = 128;
        LossScaler s(c);
        QVERIFY(!s.update(false));
        QCOMPARE(s.scale(), 128.0f);
        for (int i = 0; i < 5000; ++i) s.update(true);
        QCOMPARE(s.scale(), 128.0f);
    }

    void unscaleDetectsNonFinite() {
        LossScalerConfig c;
        c.initialScale = 4;
        LossScaler s(c);
        std::vector<float> g{4.0f, -8.0f, 2.0f};
        QVERIFY(s.unscale(g));
        QCOMPARE(g, (std::vector<float>{1.0f, -2.0f, 0.5f}));
        std::vector<float> inf{1.0f, std::numeric_limits<float>::infinity()};
        QVERIFY(!s.unscale(inf));
        std::vector<float> nan{std::nanf(""), 1.0f};
        QVERIFY(!LossScaler::allFinite(nan));
        QVERIFY(LossScaler::allFinite(std::vector<float>{0.0f, -1e30f}));
    }

    void validation() {
        LossScalerConfig c;
        QVERIFY(c.validate().ok());
        c.backoffFactor = 1.5f;
        auto st = c.validate();
        QVERIFY(!st.ok());
        QCOMPARE(QString::fromStdString(st.error().param("field")),
                 QStringLiteral("mixed_precision.backoff_factor"));
        c = LossScalerConfig{};
        c.growthInterval = 0;
        QVERIFY(!c.validate().ok());
    }

    // A fp16-like loop: gradients scaled by the loss scale overflow above 65504 (fp16's largest
    // value); the scaler finds the largest scale that fits and training steps continue.
    void settlesBelowOverflow() {
        LossScalerConfig c;
        c.growthInterval = 4;
        LossScaler s(c);
        const float trueGrad = 3.0f;  // scale * 3 must stay below 65504
        int applied = 0;
        for (int step = 0; step < 100; ++step) {
            float scaled = trueGrad * s.scale();
            float asHalf = scaled > 65504.0f ? std::numeric_limits<float>::infinity() : scaled;
            std::vector<float> g{asHalf};
            bool finite = s.unscale(g);
            if (s.update(finite)) {
                ++applied;
                QCOMPARE(g[0], trueGrad);
            }
        }
        QVERIFY(s.scale() * trueGrad <= 65504.0f * 2);
        QVERIFY(applied > 70);
        QVERIFY(s.skippedSteps() > 0);
    }
};

QTEST_APPLESS_MAIN(TestLossScaler)
#include "tst_loss_scaler.moc"
