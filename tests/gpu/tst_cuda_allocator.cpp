// SPDX-License-Identifier: Apache-2.0
// The caching allocator: size classes, per-stream reuse, statistics, the cap and out-of-memory
// errors, first over host memory (runs everywhere), then on a real device (skips without one).
#include <QtTest>

#include <cstdlib>
#include <set>

#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/caching_allocator.h"
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/device_context.h"

using namespace kiln::engine;
using namespace kiln::engine::cuda;

namespace {
// Host memory standing in for a device of `total` bytes; counts calls.
class HostMemory final : public RawMemory {
public:
    explicit HostMemory(uint64_t total, int* allocs = nullptr, int* releases = nullptr)
        : m_total(total), m_allocs(allocs), m_releases(releases) {}
    void* allocate(size_t bytes) override {
        if (m_used + bytes > m_total) return nullptr;
        m_used += bytes;
        if (m_allocs) ++*m_allocs;
        void* p = std::aligned_alloc(256, bytes);
        m_sizes[p] = bytes;
        return p;
    }
    void release(void* p) override {
        m_used -= m_sizes[p];
        m_sizes.erase(p);
        if (m_releases) ++*m_releases;
        std::free(p);
    }
    uint64_t totalBytes() const override { return m_total; }

private:
    uint64_t m_total;
    uint64_t m_used = 0;
    int* m_allocs;
    int* m_releases;
    std::map<void*, size_t> m_sizes;
};
StreamHandle fakeStream(int k) {
    return reinterpret_cast<StreamHandle>(static_cast<uintptr_t>(0x1000 * k));
}
}  // namespace
#endif

class TestCudaAllocator : public QObject {
    Q_OBJECT

private slots:
    void sizeClasses() {
#ifdef KILN_HAVE_CUDA
        QCOMPARE(CachingAllocator::roundSize(1), size_t{512});
        QCOMPARE(CachingAllocator::roundSize(513), size_t{1024});
        QCOMPARE(CachingAllocator::roundSize((1u << 20) - 1), size_t{1u << 20});
        QCOMPARE(CachingAllocator::roundSize((1u << 20) + 1), size_t{2u << 20});
        QCOMPARE(CachingAllocator::roundSize(5u << 20), size_t{6u << 20});
#else
        QSKIP("built without CUDA");
#endif
    }

    void reusesPerStreamAndCounts() {
#ifdef KILN_HAVE_CUDA
        int allocs = 0, releases = 0;
        CachingAllocator a(std::make_unique<HostMemory>(64u << 20, &allocs, &releases), MemoryLimit{},
                           "test");
        auto p = a.allocate(1000, fakeStream(1));
        QVERIFY(p.ok());
        a.free(*p);
        auto q = a.allocate(900, fakeStream(1));  // same class, same stream: the cached block
        QVERIFY(q.ok());
        QCOMPARE(*q, *p);
        QCOMPARE(allocs, 1);
        auto r = a.allocate(900, fakeStream(2));  // another stream never takes it without a sync
        QVERIFY(r.ok());
        QVERIFY(*r != *q);
        QCOMPARE(allocs, 2);
        auto s = a.stats();
        QCOMPARE(s.allocations, uint64_t{3});
        QCOMPARE(s.cacheHits, uint64_t{1});
        QCOMPARE(s.inUse, uint64_t{2048});
        QCOMPARE(s.reserved, uint64_t{2048});
        a.free(*q);
        a.free(*r);
        QCOMPARE(a.stats().inUse, uint64_t{0});
        QCOMPARE(a.stats().peakInUse, uint64_t{2048});
        a.emptyCache();
        QCOMPARE(releases, 2);
        QCOMPARE(a.stats().reserved, uint64_t{0});
        // A huge cached block is not spent on a small request.
        auto big = a.allocate(8u << 20, fakeStream(1));
        a.free(*big);
        auto small = a.allocate(100, fakeStream(1));
        QVERIFY(*small != *big);
        a.free(*small);
#else
        QSKIP("built without CUDA");
#endif
    }

    void capGivesOutOfMemoryWithNumbers() {
#ifdef KILN_HAVE_CUDA
        MemoryLimit lim;
        lim.mode = MemoryLimit::Mode::Bytes;
        lim.bytes = 10u << 20;
        CachingAllocator a(std::make_unique<HostMemory>(100u << 20), lim, "cuda:0");
        QCOMPARE(a.stats().cap, uint64_t{10u << 20});
        auto p = a.allocate(6u << 20, fakeStream(1));
        QVERIFY(p.ok());
        auto q = a.allocate(6u << 20, fakeStream(1));
        QVERIFY(!q.ok());
        QCOMPARE(q.error().code, ErrorCode::OutOfMemory);
        QCOMPARE(q.error().param("requested"), std::to_string(6u << 20));
        QCOMPARE(q.error().param("in_use"), std::to_string(6u << 20));
        QCOMPARE(q.error().param("cap"), std::to_string(10u << 20));
        QCOMPARE(q.error().param("device"), std::string("cuda:0"));
        QCOMPARE(a.stats().failures, uint64_t{1});
        // Cached blocks are released to make room before giving up.
        a.free(*p);
        auto r = a.allocate(8u << 20, fakeStream(2));
        QVERIFY(r.ok());
        a.free(*r);
#else
        QSKIP("built without CUDA");
#endif
    }

    void deviceRefusalIsAnError() {
#ifdef KILN_HAVE_CUDA
        CachingAllocator a(std::make_unique<HostMemory>(4u << 20), MemoryLimit::parse("all").value(),
                           "cuda:0");
        auto p = a.allocate(3u << 20, fakeStream(1));
        QVERIFY(p.ok());
        auto q = a.allocate(3u << 20, fakeStream(1));
        QVERIFY(!q.ok());
        QCOMPARE(q.error().code, ErrorCode::OutOfMemory);
        a.free(*p);
#else
        QSKIP("built without CUDA");
#endif
    }

    void limitParsing() {
#ifdef KILN_HAVE_CUDA
        QCOMPARE(MemoryLimit::parse("growth")->mode, MemoryLimit::Mode::Growth);
        QCOMPARE(MemoryLimit::parse("0.5")->capFor(1000), uint64_t{500});
        QCOMPARE(MemoryLimit::parse("25%")->capFor(1000), uint64_t{250});
        QCOMPARE(MemoryLimit::parse("2GiB")->capFor(100ull << 30), uint64_t{2ull << 30});
        QCOMPARE(MemoryLimit::parse("2GiB")->capFor(1ull << 30),
                 uint64_t{1ull << 30});  // never above the card
        QCOMPARE(MemoryLimit::parse("all")->capFor(1000), uint64_t{1000});
        QCOMPARE(MemoryLimit{}.capFor(1000), uint64_t{950});  // growth leaves room for the context
        QVERIFY(!MemoryLimit::parse("lots").ok());
        QVERIFY(!MemoryLimit::parse("150%").ok());
        QCOMPARE(MemoryLimit::parse("x").error().param("field"), std::string("device.memory"));
#else
        QSKIP("built without CUDA");
#endif
    }

    void onDevice() {
#ifdef KILN_HAVE_CUDA
        if (deviceCount() == 0) QSKIP("no CUDA device");
        MemoryLimit lim;
        lim.mode = MemoryLimit::Mode::Bytes;
        lim.bytes = 256u << 20;
        auto ctx = DeviceContext::create(0, lim);
        QVERIFY2(ctx.ok(), ctx.ok() ? "" : ctx.error().message.c_str());
        auto& a = (*ctx)->allocator();
        const auto before = a.stats();
        {
            auto b = (*ctx)->alloc(100u << 20);
            QVERIFY(b.ok());
            QVERIFY(a.stats().inUse >= before.inUse + (100u << 20));
        }
        QCOMPARE(a.stats().inUse, before.inUse);  // back in the cache
        auto again = (*ctx)->alloc(100u << 20);
        QVERIFY(again.ok());
        QCOMPARE(a.stats().deviceAllocations, before.deviceAllocations + 1);  // reused, no second cudaMalloc
        auto tooMuch = (*ctx)->alloc(300u << 20);
        QVERIFY(!tooMuch.ok());
        QCOMPARE(tooMuch.error().code, ErrorCode::OutOfMemory);
        QVERIFY(!tooMuch.error().param("cap").empty());
#else
        QSKIP("built without CUDA");
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaAllocator)
#include "tst_cuda_allocator.moc"
