// SPDX-License-Identifier: Apache-2.0
// Engine core: shapes, devices, dtypes and 16-bit float conversions, tensors, the aligned
// allocator and its counters, the thread pool's static chunking, and the Philox RNG (known answers).
// kiln-test-libs: kiln_core
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "engine/core/allocator.h"
#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/core/rng.h"
#include "engine/core/shape.h"
#include "engine/core/tensor.h"
#include "engine/core/thread_pool.h"

using namespace kiln::engine;

namespace {

float bitsToFloat(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t floatToBits(float f) { return std::bit_cast<uint32_t>(f); }

bool isHalfNan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; }
bool isBf16Nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0; }

// One chunk of a parallelFor call, with the thread that ran it.
struct Chunk {
    int64_t begin;
    int64_t end;
    std::thread::id thread;
    bool operator<(const Chunk& o) const { return begin < o.begin; }
};

std::vector<Chunk> recordChunks(ThreadPool& pool, int64_t n, int64_t grain) {
    std::mutex m;
    std::vector<Chunk> chunks;
    pool.parallelFor(n, grain, [&](int64_t b, int64_t e) {
        std::lock_guard lock(m);
        chunks.push_back({b, e, std::this_thread::get_id()});
    });
    std::sort(chunks.begin(), chunks.end());
    return chunks;
}

}  // namespace

class TestCore : public QObject {
    Q_OBJECT

private slots:
    // ---- Shape ---------------------------------------------------------------------------------
    void shapeToString() {
        QCOMPARE(Shape({Shape::kBatch, 28, 28, 1}).toString(), std::string("[N,28,28,1]"));
        QCOMPARE(Shape({3, 4}).toString(), std::string("[3,4]"));
        QCOMPARE(Shape().toString(), std::string("[]"));
        QCOMPARE(Shape({Shape::kBatch}).toString(), std::string("[N]"));
    }

    void shapeNumelWithSymbolicBatch() {
        Shape s{Shape::kBatch, 28, 28, 1};
        QCOMPARE(s.rank(), 4);
        QVERIFY(s.hasBatch());
        QVERIFY(!s.isConcrete());
        QCOMPARE(s.numel(), int64_t{784});  // the batch counts as 1
        QCOMPARE(s.numelFrom(1), int64_t{784});
        QCOMPARE(s.numelFrom(2), int64_t{28});
        QCOMPARE(s[-1], int64_t{1});
        QCOMPARE(s[0], Shape::kBatch);
        QCOMPARE(Shape().numel(), int64_t{1});  // a scalar
        QCOMPARE(Shape({5, 0, 3}).numel(), int64_t{0});
        QVERIFY(!Shape({5, 3}).hasBatch());
    }

    void shapeWithBatch() {
        Shape s{Shape::kBatch, 28, 28, 1};
        Shape c = s.withBatch(32);
        QCOMPARE(c, Shape({32, 28, 28, 1}));
        QVERIFY(c.isConcrete());
        QVERIFY(!c.hasBatch());
        QCOMPARE(c.numel(), int64_t{32 * 784});
        QCOMPARE(c.toString(), std::string("[32,28,28,1]"));
        QCOMPARE(s.withoutFirst(), Shape({28, 28, 1}));
        // A concrete shape is unchanged.
        QCOMPARE(Shape({2, 3}).withBatch(7), Shape({2, 3}));
        QVERIFY(s != c);
    }

    // ---- Device --------------------------------------------------------------------------------
    void deviceParse() {
        auto cpu = Device::parse("cpu");
        QVERIFY(cpu.ok());
        QVERIFY(cpu->isCpu());
        QCOMPARE(cpu->toString(), std::string("cpu"));

        auto cuda = Device::parse("cuda");
        QVERIFY(cuda.ok());
        QVERIFY(*cuda == Device::cuda(0));
        QCOMPARE(cuda->toString(), std::string("cuda:0"));

        auto cuda1 = Device::parse("cuda:1");
        QVERIFY(cuda1.ok());
        QCOMPARE(cuda1->kind, Device::Kind::Cuda);
        QCOMPARE(cuda1->index, 1);
        QCOMPARE(cuda1->toString(), std::string("cuda:1"));
        QVERIFY(!cuda1->isCpu());

        // toString parses back.
        auto again = Device::parse(Device::cuda(12).toString());
        QVERIFY(again.ok());
        QVERIFY(*again == Device::cuda(12));
    }

    void deviceParseErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("empty") << "";
        QTest::newRow("tpu") << "tpu";
        QTest::newRow("no index") << "cuda:";
        QTest::newRow("negative") << "cuda:-1";
        QTest::newRow("trailing") << "cuda:1x";
        QTest::newRow("space") << "cuda: 1";
        QTest::newRow("cpu index") << "cpu:0";
    }
    void deviceParseErrors() {
        QFETCH(QString, text);
        const std::string s = text.toStdString();
        auto r = Device::parse(s);
        QVERIFY2(!r.ok(), s.c_str());
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(r.error().param("device"), s);
        QVERIFY(r.error().message.find("cpu or cuda:N") != std::string::npos);
    }

    // ---- DType ---------------------------------------------------------------------------------
    void dtypeNames() {
        const std::pair<DType, const char*> all[] = {{DType::F32, "F32"}, {DType::F16, "F16"}, {DType::BF16, "BF16"},
                                                     {DType::I32, "I32"}, {DType::I64, "I64"}, {DType::U8, "U8"},
                                                     {DType::Bool, "BOOL"}};
        for (const auto& [t, name] : all) {
            QCOMPARE(dtypeName(t), std::string_view(name));
            auto back = dtypeFromName(name);
            QVERIFY(back.has_value());
            QCOMPARE(*back, t);
        }
        QCOMPARE(dtypeSize(DType::F32), size_t{4});
        QCOMPARE(dtypeSize(DType::F16), size_t{2});
        QCOMPARE(dtypeSize(DType::BF16), size_t{2});
        QCOMPARE(dtypeSize(DType::I64), size_t{8});
        QCOMPARE(dtypeSize(DType::U8), size_t{1});
        QCOMPARE(dtypeSize(DType::Bool), size_t{1});
        QVERIFY(!dtypeFromName("f32").has_value());
        QVERIFY(!dtypeFromName("F64").has_value());
        QVERIFY(!dtypeFromName("").has_value());
    }

    // Every finite half value converts to float and back to the same bits; NaNs stay NaN.
    void halfRoundTripAllValues() {
        int nans = 0;
        for (uint32_t h = 0; h <= 0xffffu; ++h) {
            const auto hv = static_cast<uint16_t>(h);
            const float f = halfToFloat(hv);
            if (isHalfNan(hv)) {
                QVERIFY(std::isnan(f));
                QVERIFY(isHalfNan(floatToHalf(f)));
                ++nans;
                continue;
            }
            const uint16_t back = floatToHalf(f);
            if (back != hv) QFAIL(qPrintable(QString("half 0x%1 -> %2 -> 0x%3").arg(h, 4, 16, QChar('0')).arg(f).arg(back, 4, 16, QChar('0'))));
        }
        QCOMPARE(nans, 2 * 1023);
    }

    void halfKnownValues() {
        QCOMPARE(floatToHalf(0.0f), uint16_t{0x0000});
        QCOMPARE(floatToHalf(-0.0f), uint16_t{0x8000});
        QCOMPARE(floatToHalf(1.0f), uint16_t{0x3c00});
        QCOMPARE(floatToHalf(-2.0f), uint16_t{0xc000});
        QCOMPARE(floatToHalf(0.5f), uint16_t{0x3800});
        QCOMPARE(floatToHalf(65504.0f), uint16_t{0x7bff});  // largest finite
        QCOMPARE(halfToFloat(0x7bff), 65504.0f);
        QCOMPARE(halfToFloat(0x3555), 0.333251953125f);
        QCOMPARE(floatToHalf(1.0f / 3.0f), uint16_t{0x3555});
        // Infinities and NaN.
        QCOMPARE(floatToHalf(std::numeric_limits<float>::infinity()), uint16_t{0x7c00});
        QCOMPARE(floatToHalf(-std::numeric_limits<float>::infinity()), uint16_t{0xfc00});
        QVERIFY(std::isinf(halfToFloat(0x7c00)) && halfToFloat(0x7c00) > 0);
        QVERIFY(std::isinf(halfToFloat(0xfc00)) && halfToFloat(0xfc00) < 0);
        QVERIFY(isHalfNan(floatToHalf(std::numeric_limits<float>::quiet_NaN())));
        QVERIFY(isHalfNan(floatToHalf(bitsToFloat(0x7f800001u))));  // payload only in low bits
        QVERIFY(isHalfNan(floatToHalf(bitsToFloat(0xffc00000u))));
        // Overflow: 65520 is halfway between 65504 and 2^16 and rounds (to even) to infinity.
        QCOMPARE(floatToHalf(65519.996f), uint16_t{0x7bff});
        QCOMPARE(floatToHalf(65520.0f), uint16_t{0x7c00});
        QCOMPARE(floatToHalf(1e6f), uint16_t{0x7c00});
        QCOMPARE(floatToHalf(-1e6f), uint16_t{0xfc00});
        QCOMPARE(floatToHalf(std::numeric_limits<float>::max()), uint16_t{0x7c00});
    }

    void halfRoundToNearestEven() {
        const float ulp1 = std::ldexp(1.0f, -10);  // spacing of halves in [1, 2)
        // Exactly halfway: to the even mantissa.
        QCOMPARE(floatToHalf(1.0f + ulp1 / 2), uint16_t{0x3c00});
        QCOMPARE(floatToHalf(1.0f + 3 * ulp1 / 2), uint16_t{0x3c02});
        QCOMPARE(floatToHalf(1.0f + 5 * ulp1 / 2), uint16_t{0x3c02});
        QCOMPARE(floatToHalf(-(1.0f + 3 * ulp1 / 2)), uint16_t{0xbc02});
        // Just above / below halfway.
        QCOMPARE(floatToHalf(std::nextafter(1.0f + ulp1 / 2, 2.0f)), uint16_t{0x3c01});
        QCOMPARE(floatToHalf(std::nextafter(1.0f + 3 * ulp1 / 2, 0.0f)), uint16_t{0x3c01});
        // Rounding up carries into the exponent: 2 - ulp/4 -> 2.
        QCOMPARE(floatToHalf(2.0f - ulp1 / 4), uint16_t{0x4000});
        // Every float between two adjacent halves rounds to the nearer one.
        for (uint16_t h = 0x3c00; h < 0x3c40; ++h) {
            const float lo = halfToFloat(h), hi = halfToFloat(static_cast<uint16_t>(h + 1));
            QCOMPARE(floatToHalf(lo + (hi - lo) * 0.25f), h);
            QCOMPARE(floatToHalf(lo + (hi - lo) * 0.75f), static_cast<uint16_t>(h + 1));
            QCOMPARE(floatToHalf((lo + hi) / 2), (h & 1u) ? static_cast<uint16_t>(h + 1) : h);
        }
    }

    void halfSubnormals() {
        const float tiny = std::ldexp(1.0f, -24);  // smallest half subnormal
        QCOMPARE(floatToHalf(tiny), uint16_t{0x0001});
        QCOMPARE(halfToFloat(0x0001), tiny);
        QCOMPARE(halfToFloat(0x03ff), 1023 * tiny);              // largest subnormal
        QCOMPARE(halfToFloat(0x0400), std::ldexp(1.0f, -14));    // smallest normal
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -14)), uint16_t{0x0400});
        QCOMPARE(halfToFloat(0x8001), -tiny);
        // Halfway cases among subnormals round to even.
        QCOMPARE(floatToHalf(tiny / 2), uint16_t{0x0000});
        QCOMPARE(floatToHalf(std::nextafter(tiny / 2, 1.0f)), uint16_t{0x0001});
        QCOMPARE(floatToHalf(3 * tiny / 2), uint16_t{0x0002});
        QCOMPARE(floatToHalf(5 * tiny / 2), uint16_t{0x0002});
        QCOMPARE(floatToHalf(7 * tiny / 2), uint16_t{0x0004});
        QCOMPARE(floatToHalf(-3 * tiny / 2), uint16_t{0x8002});
        // The largest subnormal plus half a step rounds up into the smallest normal.
        QCOMPARE(floatToHalf(1023.5f * tiny), uint16_t{0x0400});
        QCOMPARE(floatToHalf(1022.5f * tiny), uint16_t{0x03fe});
        // Underflow to (signed) zero.
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -30)), uint16_t{0x0000});
        QCOMPARE(floatToHalf(-std::ldexp(1.0f, -30)), uint16_t{0x8000});
        QCOMPARE(floatToHalf(bitsToFloat(0x00000001u)), uint16_t{0x0000});  // float subnormal
    }

    void bf16RoundTripAllValues() {
        int nans = 0;
        for (uint32_t b = 0; b <= 0xffffu; ++b) {
            const auto bv = static_cast<uint16_t>(b);
            const float f = bf16ToFloat(bv);
            QCOMPARE(floatToBits(f), b << 16);
            if (isBf16Nan(bv)) {
                QVERIFY(std::isnan(f));
                QVERIFY(isBf16Nan(floatToBf16(f)));
                ++nans;
                continue;
            }
            if (floatToBf16(f) != bv) QFAIL(qPrintable(QString("bf16 0x%1 does not round-trip").arg(b, 4, 16, QChar('0'))));
        }
        QCOMPARE(nans, 2 * 127);
    }

    void bf16RoundingAndSpecials() {
        QCOMPARE(floatToBf16(1.0f), uint16_t{0x3f80});
        QCOMPARE(floatToBf16(-2.0f), uint16_t{0xc000});
        QCOMPARE(floatToBf16(-0.0f), uint16_t{0x8000});
        const float ulp1 = std::ldexp(1.0f, -7);
        QCOMPARE(floatToBf16(1.0f + ulp1 / 2), uint16_t{0x3f80});      // halfway -> even
        QCOMPARE(floatToBf16(1.0f + 3 * ulp1 / 2), uint16_t{0x3f82});  // halfway -> even
        QCOMPARE(floatToBf16(std::nextafter(1.0f + ulp1 / 2, 2.0f)), uint16_t{0x3f81});
        QCOMPARE(floatToBf16(std::nextafter(1.0f + 3 * ulp1 / 2, 0.0f)), uint16_t{0x3f81});
        QCOMPARE(floatToBf16(bitsToFloat(0x3f80ffffu)), uint16_t{0x3f81});
        QCOMPARE(floatToBf16(bitsToFloat(0x3f807fffu)), uint16_t{0x3f80});
        // Infinities, overflow, NaN (even a NaN whose payload sits only in the dropped bits).
        QCOMPARE(floatToBf16(std::numeric_limits<float>::infinity()), uint16_t{0x7f80});
        QCOMPARE(floatToBf16(-std::numeric_limits<float>::infinity()), uint16_t{0xff80});
        QCOMPARE(floatToBf16(std::numeric_limits<float>::max()), uint16_t{0x7f80});  // above the halfway point
        QCOMPARE(floatToBf16(bitsToFloat(0x7f7f7fffu)), uint16_t{0x7f7f});           // below it
        QVERIFY(isBf16Nan(floatToBf16(std::numeric_limits<float>::quiet_NaN())));
        QVERIFY(isBf16Nan(floatToBf16(bitsToFloat(0x7f800001u))));
        QVERIFY(isBf16Nan(floatToBf16(bitsToFloat(0xff800001u))));
        QVERIFY(floatToBf16(bitsToFloat(0xff800001u)) & 0x8000u);  // keeps the sign
        // Subnormals: bf16 has float's exponent range, so float subnormals with only high bits are exact.
        QCOMPARE(floatToBf16(bitsToFloat(0x00010000u)), uint16_t{0x0001});
        QCOMPARE(floatToBits(bf16ToFloat(0x0001)), 0x00010000u);
        QCOMPARE(floatToBf16(bitsToFloat(0x00008000u)), uint16_t{0x0000});  // halfway -> even (0)
        QCOMPARE(floatToBf16(bitsToFloat(0x00018000u)), uint16_t{0x0002});  // halfway -> even (2)
        QCOMPARE(floatToBf16(bitsToFloat(0x00000001u)), uint16_t{0x0000});
        QCOMPARE(floatToBf16(bitsToFloat(0x007fffffu)), uint16_t{0x0080});  // rounds up to the smallest normal
    }

    // ---- Tensor --------------------------------------------------------------------------------
    void tensorZeroFilled() {
        Tensor t(Shape{3, 5});
        QVERIFY(t.defined());
        QCOMPARE(t.numel(), int64_t{15});
        QCOMPARE(t.bytes(), size_t{60});
        QCOMPARE(t.dtype(), DType::F32);
        QVERIFY(t.device().isCpu());
        QCOMPARE(reinterpret_cast<uintptr_t>(t.raw()) % kTensorAlignment, uintptr_t{0});
        for (float v : t.f32()) QCOMPARE(v, 0.0f);

        Tensor i(Shape{4}, DType::I64);
        QCOMPARE(i.bytes(), size_t{32});
        for (int k = 0; k < 4; ++k) QCOMPARE(i.data<int64_t>()[k], int64_t{0});

        Tensor u(Shape{7}, DType::U8);
        QCOMPARE(u.bytes(), size_t{7});
        for (int k = 0; k < 7; ++k) QCOMPARE(u.data<uint8_t>()[k], uint8_t{0});

        QVERIFY(!Tensor().defined());
    }

    void tensorFromVectorFillCopy() {
        Tensor t = Tensor::fromVector(Shape{2, 2}, {1, 2, 3, 4});
        QCOMPARE(t.f32()[3], 4.0f);
        t.fill(2.5f);
        for (float v : t.f32()) QCOMPARE(v, 2.5f);
        Tensor s = Tensor::fromVector(Shape{4}, {9, 8, 7, 6});
        t.copyFrom(s);
        QCOMPARE(t.f32()[0], 9.0f);
        QCOMPARE(t.f32()[3], 6.0f);
        QCOMPARE(t.shape(), Shape({2, 2}));  // the shape is kept
    }

    void tensorReshapedSharesData() {
        Tensor t = Tensor::fromVector(Shape{2, 3}, {0, 1, 2, 3, 4, 5});
        Tensor v = t.reshaped(Shape{3, 2});
        QCOMPARE(v.shape(), Shape({3, 2}));
        QCOMPARE(v.raw(), t.raw());
        v.data<float>()[4] = 40.0f;
        QCOMPARE(t.data<float>()[4], 40.0f);
        t.data<float>()[1] = 10.0f;
        QCOMPARE(v.data<float>()[1], 10.0f);
        // The view keeps the storage alive.
        Tensor keep;
        {
            Tensor a = Tensor::fromVector(Shape{4}, {1, 2, 3, 4});
            keep = a.reshaped(Shape{2, 2});
        }
        QCOMPARE(keep.f32()[3], 4.0f);
    }

    void tensorCloneIsDeep() {
        Tensor t = Tensor::fromVector(Shape{2, 2}, {1, 2, 3, 4});
        Tensor c = t.clone();
        QVERIFY(c.raw() != t.raw());
        QCOMPARE(c.shape(), t.shape());
        QCOMPARE(c.dtype(), t.dtype());
        QCOMPARE(reinterpret_cast<uintptr_t>(c.raw()) % kTensorAlignment, uintptr_t{0});
        c.data<float>()[0] = 100.0f;
        QCOMPARE(t.data<float>()[0], 1.0f);
        t.data<float>()[3] = -1.0f;
        QCOMPARE(c.data<float>()[3], 4.0f);

        Tensor bytes(Shape{3}, DType::U8);
        bytes.data<uint8_t>()[1] = 7;
        Tensor bc = bytes.clone();
        QCOMPARE(bc.dtype(), DType::U8);
        QCOMPARE(bc.data<uint8_t>()[1], uint8_t{7});
    }

    void tensorWrapUsesExternalMemory() {
        alignas(64) float buf[6] = {1, 2, 3, 4, 5, 6};
        Tensor w = Tensor::wrap(buf, Shape{2, 3});
        QCOMPARE(w.data<float>(), buf);
        w.data<float>()[5] = 60.0f;
        QCOMPARE(buf[5], 60.0f);
    }

    // ---- Allocator -----------------------------------------------------------------------------
    void alignedAllocAlignment() {
        for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{63}, size_t{64}, size_t{65}, size_t{1000},
                             size_t{4096}, size_t{1} << 20}) {
            void* p = alignedAlloc(bytes);
            QVERIFY(p != nullptr);
            QCOMPARE(reinterpret_cast<uintptr_t>(p) % 64, uintptr_t{0});
            std::memset(p, 0xab, bytes);  // the whole block is writable (ASan/valgrind would notice)
            alignedFree(p);
        }
        alignedFree(nullptr);  // a no-op
    }

    void allocStatsCounters() {
        const AllocStats before = allocStats();
        void* a = alignedAlloc(1000);
        AllocStats s1 = allocStats();
        QCOMPARE(s1.allocations, before.allocations + 1);
        QCOMPARE(s1.liveBytes, before.liveBytes + 1000);
        QVERIFY(s1.peakBytes >= s1.liveBytes);
        void* b = alignedAlloc(24);
        AllocStats s2 = allocStats();
        QCOMPARE(s2.allocations, before.allocations + 2);
        QCOMPARE(s2.liveBytes, before.liveBytes + 1024);
        QVERIFY(s2.peakBytes >= before.liveBytes + 1024);
        alignedFree(a);
        AllocStats s3 = allocStats();
        QCOMPARE(s3.allocations, before.allocations + 2);  // frees do not count
        QCOMPARE(s3.liveBytes, before.liveBytes + 24);
        QCOMPARE(s3.peakBytes, s2.peakBytes);  // the peak stays
        alignedFree(b);
        QCOMPARE(allocStats().liveBytes, before.liveBytes);

        // Tensors allocate through it: one allocation per storage, none for views.
        const AllocStats t0 = allocStats();
        {
            Tensor t(Shape{16, 16});
            QCOMPARE(allocStats().allocations, t0.allocations + 1);
            QCOMPARE(allocStats().liveBytes, t0.liveBytes + 1024);
            Tensor v = t.reshaped(Shape{256});
            QCOMPARE(allocStats().allocations, t0.allocations + 1);
            Tensor c = t.clone();
            QCOMPARE(allocStats().allocations, t0.allocations + 2);
        }
        QCOMPARE(allocStats().liveBytes, t0.liveBytes);
    }

    void alignedBufferFrees() {
        const AllocStats before = allocStats();
        {
            AlignedBuffer buf = makeAlignedBuffer(333);
            QVERIFY(buf);
            QCOMPARE(reinterpret_cast<uintptr_t>(buf.get()) % 64, uintptr_t{0});
            QCOMPARE(allocStats().liveBytes, before.liveBytes + 333);
        }
        QCOMPARE(allocStats().liveBytes, before.liveBytes);
    }

    // ---- ThreadPool ----------------------------------------------------------------------------
    void parallelForCoversRangeOnce_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<qlonglong>("n");
        QTest::addColumn<qlonglong>("grain");
        QTest::newRow("4 threads, 1000, grain 1") << 4 << 1000LL << 1LL;
        QTest::newRow("3 threads, 10, grain 1") << 3 << 10LL << 1LL;
        QTest::newRow("4 threads, 3 items") << 4 << 3LL << 1LL;
        QTest::newRow("2 threads, 1 item") << 2 << 1LL << 1LL;
        QTest::newRow("4 threads, 1000, grain 100") << 4 << 1000LL << 100LL;
        QTest::newRow("4 threads, 1000, grain 400") << 4 << 1000LL << 400LL;
        QTest::newRow("4 threads, 1000, grain 999") << 4 << 1000LL << 999LL;
        QTest::newRow("4 threads, 50, grain 1000") << 4 << 50LL << 1000LL;
        QTest::newRow("1 thread, 1000") << 1 << 1000LL << 1LL;
        QTest::newRow("2 threads, 100001, grain 0") << 2 << 100001LL << 0LL;
    }
    void parallelForCoversRangeOnce() {
        QFETCH(int, threads);
        QFETCH(qlonglong, n);
        QFETCH(qlonglong, grain);
        ThreadPool pool(threads);
        QCOMPARE(pool.size(), threads);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallelFor(n, grain, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i)
            if (hits[static_cast<size_t>(i)].load() != 1)
                QFAIL(qPrintable(QString("index %1 was visited %2 times").arg(i).arg(hits[static_cast<size_t>(i)].load())));

        // Static chunks: contiguous, at most size() of them, at least `grain` items each (when the
        // range allows), the same boundaries on every call, the first one on the calling thread.
        const std::vector<Chunk> first = recordChunks(pool, n, grain);
        QVERIFY(!first.empty());
        QVERIFY(static_cast<int>(first.size()) <= threads);
        QCOMPARE(first.front().begin, int64_t{0});
        QCOMPARE(first.back().end, int64_t{n});
        for (size_t k = 1; k < first.size(); ++k) QCOMPARE(first[k].begin, first[k - 1].end);
        const int64_t g = std::max<qlonglong>(grain, 1);
        if (n >= g)
            for (const Chunk& c : first)
                if (c.end - c.begin < g)
                    QFAIL(qPrintable(QString("chunk [%1, %2) is smaller than the grain %3 (n=%4, %5 chunks)")
                                         .arg(c.begin).arg(c.end).arg(g).arg(n).arg(first.size())));
        QCOMPARE(first.front().thread, std::this_thread::get_id());
        for (int rep = 0; rep < 5; ++rep) {
            const std::vector<Chunk> again = recordChunks(pool, n, grain);
            QCOMPARE(again.size(), first.size());
            for (size_t k = 0; k < first.size(); ++k) {
                QCOMPARE(again[k].begin, first[k].begin);
                QCOMPARE(again[k].end, first[k].end);
            }
        }
        // Boundaries depend only on n and the thread count: another pool of the same size agrees.
        ThreadPool other(threads);
        const std::vector<Chunk> fromOther = recordChunks(other, n, grain);
        QCOMPARE(fromOther.size(), first.size());
        for (size_t k = 0; k < first.size(); ++k) QCOMPARE(fromOther[k].begin, first[k].begin);
    }

    void parallelForUsesWorkers() {
        ThreadPool pool(3);
        // Make each chunk wait until all three have started: only possible if they run concurrently.
        std::atomic<int> started{0};
        std::mutex m;
        std::set<std::thread::id> ids;
        pool.parallelFor(3, 1, [&](int64_t, int64_t) {
            started.fetch_add(1);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (started.load() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
            std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
        });
        QCOMPARE(started.load(), 3);
        QCOMPARE(ids.size(), size_t{3});
    }

    void parallelForEmptyRange() {
        ThreadPool pool(2);
        int calls = 0;
        pool.parallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
        pool.parallelFor(-5, 1, [&](int64_t, int64_t) { ++calls; });
        QCOMPARE(calls, 0);
    }

    void nestedParallelForRunsInline() {
        ThreadPool pool(3);
        constexpr int64_t kOuter = 6, kInner = 100;
        std::vector<std::atomic<int>> hits(static_cast<size_t>(kOuter * kInner));
        std::atomic<int> foreignThread{0};
        std::atomic<int> innerChunks{0};
        pool.parallelFor(kOuter, 1, [&](int64_t ob, int64_t oe) {
            const auto me = std::this_thread::get_id();
            for (int64_t o = ob; o < oe; ++o) {
                pool.parallelFor(kInner, 1, [&](int64_t ib, int64_t ie) {
                    innerChunks.fetch_add(1);
                    if (std::this_thread::get_id() != me) foreignThread.fetch_add(1);
                    for (int64_t i = ib; i < ie; ++i) hits[static_cast<size_t>(o * kInner + i)].fetch_add(1);
                });
            }
        });
        QCOMPARE(foreignThread.load(), 0);
        for (size_t i = 0; i < hits.size(); ++i) QCOMPARE(hits[i].load(), 1);
        // Inline runs keep the static chunking (same boundaries as a top-level call) or run one
        // chunk; either way no more than size() chunks per inner call.
        QVERIFY(innerChunks.load() >= static_cast<int>(kOuter));
        QVERIFY(innerChunks.load() <= static_cast<int>(kOuter) * pool.size());
        // The pool still works after nesting.
        std::atomic<int64_t> sum{0};
        pool.parallelFor(1000, 1, [&](int64_t b, int64_t e) {
            int64_t s = 0;
            for (int64_t i = b; i < e; ++i) s += i;
            sum.fetch_add(s);
        });
        QCOMPARE(sum.load(), int64_t{999 * 1000 / 2});
    }

    void runOnAllOncePerThread() {
        for (int threads : {1, 2, 4}) {
            ThreadPool pool(threads);
            std::vector<std::atomic<int>> calls(static_cast<size_t>(threads));
            std::mutex m;
            std::set<std::thread::id> ids;
            std::atomic<int> bad{0};
            for (int rep = 0; rep < 3; ++rep) {
                ids.clear();
                pool.runOnAll([&](int t) {
                    if (t < 0 || t >= threads) {
                        bad.fetch_add(1);
                        return;
                    }
                    calls[static_cast<size_t>(t)].fetch_add(1);
                    std::lock_guard lock(m);
                    ids.insert(std::this_thread::get_id());
                });
                QCOMPARE(static_cast<int>(ids.size()), threads);
            }
            QCOMPARE(bad.load(), 0);
            for (auto& c : calls) QCOMPARE(c.load(), 3);
        }
    }

    void manyDispatches() {
        // Repeated fork-join rounds do not lose or duplicate work (wake-up races).
        ThreadPool pool(4);
        int64_t total = 0;
        for (int rep = 0; rep < 2000; ++rep) {
            std::atomic<int64_t> s{0};
            pool.parallelFor(64, 1, [&](int64_t b, int64_t e) { s.fetch_add(e - b); });
            total += s.load();
        }
        QCOMPARE(total, int64_t{2000 * 64});
    }

    void globalPool() {
        ThreadPool& g = ThreadPool::global();
        QVERIFY(g.size() >= 1);
        QCOMPARE(&ThreadPool::global(), &g);
    }

    // ---- RNG -----------------------------------------------------------------------------------
    void philoxKnownAnswers() {
        // Published Philox4x32-10 known-answer vectors (Random123 kat_vectors).
        struct Kat {
            uint32_t c[4];
            uint32_t k[2];
            uint32_t out[4];
        };
        const Kat kats[] = {
            {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
            {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
             {0xffffffffu, 0xffffffffu},
             {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
            {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
             {0xa4093822u, 0x299f31d0u},
             {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
        };
        for (const Kat& kat : kats) {
            const rng::U32x4 r = rng::philox(kat.c[0], kat.c[1], kat.c[2], kat.c[3], kat.k[0], kat.k[1]);
            for (int i = 0; i < 4; ++i)
                if (r.v[i] != kat.out[i])
                    QFAIL(qPrintable(QString("philox word %1: got 0x%2, expected 0x%3")
                                         .arg(i).arg(r.v[i], 8, 16, QChar('0')).arg(kat.out[i], 8, 16, QChar('0'))));
        }
    }

    void rngBitsLayout() {
        // bits() is word (index & 3) of the Philox block at counter (index >> 2, index >> 34,
        // stream lo, stream hi) under key (seed lo, seed hi).
        const uint64_t seed = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull;
        for (uint64_t index : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4}, uint64_t{1001},
                               (uint64_t{1} << 34) + 6}) {
            const rng::U32x4 block =
                rng::philox(static_cast<uint32_t>(index >> 2), static_cast<uint32_t>(index >> 34),
                            static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                            static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
            QCOMPARE(rng::bits(seed, stream, index), block.v[index & 3u]);
        }
        // All-zero input gives the first known-answer block.
        QCOMPARE(rng::bits(0, 0, 0), 0x6627e8d5u);
        QCOMPARE(rng::bits(0, 0, 3), 0x9b00dbd8u);
    }

    void rngDeterministicAndIndependent() {
        constexpr int kN = 256;
        std::vector<uint32_t> a(kN), again(kN), otherStream(kN), otherSeed(kN);
        for (int i = 0; i < kN; ++i) a[static_cast<size_t>(i)] = rng::bits(42, 7, static_cast<uint64_t>(i));
        // Any evaluation order gives the same values.
        for (int i = kN - 1; i >= 0; --i) again[static_cast<size_t>(i)] = rng::bits(42, 7, static_cast<uint64_t>(i));
        QVERIFY(a == again);
        for (int i = 0; i < kN; ++i) {
            otherStream[static_cast<size_t>(i)] = rng::bits(42, 8, static_cast<uint64_t>(i));
            otherSeed[static_cast<size_t>(i)] = rng::bits(43, 7, static_cast<uint64_t>(i));
        }
        int sameStream = 0, sameSeed = 0;
        for (int i = 0; i < kN; ++i) {
            sameStream += a[static_cast<size_t>(i)] == otherStream[static_cast<size_t>(i)];
            sameSeed += a[static_cast<size_t>(i)] == otherSeed[static_cast<size_t>(i)];
        }
        QCOMPARE(sameStream, 0);
        QCOMPARE(sameSeed, 0);
        // Streams that differ only in the high 32 bits differ too.
        QVERIFY(rng::bits(1, uint64_t{1} << 32, 0) != rng::bits(1, 0, 0));
        QVERIFY(rng::bits(uint64_t{1} << 32, 0, 0) != rng::bits(0, 0, 0));
        // Values within a stream are not repeated (32-bit collisions among 256 are ~1e-5 likely).
        std::set<uint32_t> distinct(a.begin(), a.end());
        QCOMPARE(distinct.size(), size_t{kN});
        // The same holds for uniform() and normal().
        QCOMPARE(rng::uniform(5, 6, 7), rng::uniform(5, 6, 7));
        QCOMPARE(rng::normal(5, 6, 7), rng::normal(5, 6, 7));
        QVERIFY(rng::uniform(5, 6, 7) != rng::uniform(5, 7, 7));
        // mix() spreads nearby inputs.
        QVERIFY(rng::mix(1, 0) != rng::mix(1, 1));
        QVERIFY(rng::mix(0, 1) != rng::mix(1, 0));
        QCOMPARE(rng::mix(123, 456), rng::mix(123, 456));
    }

    void rngUniformStatistics() {
        constexpr int kN = 100000;
        double sum = 0, sq = 0;
        float lo = 1, hi = 0;
        int buckets[10] = {};
        for (int i = 0; i < kN; ++i) {
            const float u = rng::uniform(2024, 1, static_cast<uint64_t>(i));
            QVERIFY(u >= 0.0f && u < 1.0f);
            lo = std::min(lo, u);
            hi = std::max(hi, u);
            sum += u;
            sq += static_cast<double>(u) * u;
            ++buckets[static_cast<int>(u * 10)];
        }
        const double mean = sum / kN;
        const double var = sq / kN - mean * mean;
        // Standard error of the mean is 0.29/sqrt(1e5) ~ 0.0009.
        QVERIFY2(std::abs(mean - 0.5) < 0.005, qPrintable(QString::number(mean)));
        QVERIFY2(std::abs(var - 1.0 / 12.0) < 0.002, qPrintable(QString::number(var)));
        QVERIFY(lo < 0.001f);
        QVERIFY(hi > 0.999f);
        for (int b : buckets) QVERIFY2(std::abs(b - kN / 10) < 600, qPrintable(QString::number(b)));
    }

    void rngNormalStatistics() {
        constexpr int kN = 100000;
        double sum = 0, sq = 0, cube = 0;
        int within1 = 0;
        for (int i = 0; i < kN; ++i) {
            const float z = rng::normal(99, 3, static_cast<uint64_t>(i));
            QVERIFY(std::isfinite(z));
            sum += z;
            sq += static_cast<double>(z) * z;
            cube += static_cast<double>(z) * z * z;
            within1 += std::abs(z) < 1.0f;
        }
        const double mean = sum / kN;
        const double stddev = std::sqrt(sq / kN - mean * mean);
        QVERIFY2(std::abs(mean) < 0.02, qPrintable(QString::number(mean)));
        QVERIFY2(std::abs(stddev - 1.0) < 0.02, qPrintable(QString::number(stddev)));
        QVERIFY2(std::abs(cube / kN) < 0.05, qPrintable(QString::number(cube / kN)));  // symmetric
        // P(|z| < 1) = 0.6827.
        QVERIFY2(std::abs(within1 / double(kN) - 0.6827) < 0.01, qPrintable(QString::number(within1)));
    }
};

QTEST_APPLESS_MAIN(TestCore)
#include "tst_core.moc"
