// SPDX-License-Identifier: Apache-2.0
// guarded() and errorFromException(): what an exception becomes at the api's edge (OutOfMemory
// for std::bad_alloc, Internal with "during" and "what" otherwise, also for a non-std exception),
// and a body that returns normally passes its Result through unchanged.
// kiln-test-libs: kiln_api
#include <QtTest>

#include <new>
#include <stdexcept>
#include <string>

#include "engine/api/guard.h"

using namespace kiln::engine;

class TestGuard : public QObject {
    Q_OBJECT

private slots:
    void exceptionsBecomeErrors() {
        auto r = api::guarded("training", []() -> Result<int> { throw std::runtime_error("the loss broke"); });
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Internal);
        QCOMPARE(QString::fromStdString(r.error().param("during")), QStringLiteral("training"));
        QCOMPARE(QString::fromStdString(r.error().param("what")), QStringLiteral("the loss broke"));
        QCOMPARE(QString::fromStdString(r.error().message),
                 QStringLiteral("training stopped on an unexpected exception: the loss broke"));

        r = api::guarded("preparing the training", []() -> Result<int> { throw std::bad_alloc(); });
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::OutOfMemory);
        QVERIFY2(r.error().message.find("out of memory while preparing the training") == 0, r.error().message.c_str());

        r = api::guarded("training", []() -> Result<int> { throw 42; });
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Internal);
        QCOMPARE(QString::fromStdString(r.error().param("what")), QStringLiteral("unknown exception"));
        QCOMPARE(QString::fromStdString(r.error().message), QStringLiteral("training stopped on an unknown exception"));
    }

    void resultsPassThrough() {
        auto ok = api::guarded("training", []() -> Result<int> { return 7; });
        QVERIFY(ok.ok());
        QCOMPARE(*ok, 7);
        auto err = api::guarded("training", []() -> Result<int> { return Error(ErrorCode::ConfigError, "bad field"); });
        QVERIFY(!err.ok());
        QCOMPARE(err.error().code, ErrorCode::ConfigError);
        QVERIFY(err.error().param("during").empty());
    }
};

QTEST_MAIN(TestGuard)
#include "tst_guard.moc"
