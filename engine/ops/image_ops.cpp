// SPDX-License-Identifier: Apache-2.0
// Image layers without parameters (NHWC): ZeroPadding2D and UpSampling2D resize the spatial
// dimensions, Rescaling maps pixel values (x·scale + offset) inside the model.
#include "engine/ops/kernels/elementwise.h"
#include "engine/ops/kernels/image.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

Status needImage(const ShapeContext& c) {
    if (c.inputs[0].rank() != 4)
        return shapeError(c, "expects an image batch [N,height,width,channels] but got " + c.inputs[0].toString());
    return {};
}

// ---- ZeroPadding2D -----------------------------------------------------------------------------
kernels::Pad2DGeom padGeom(const ShapeContext& c) {
    const Shape& x = c.inputs[0];
    const auto& p = c.attrs.getInts("padding");  // top, bottom, left, right
    return {x[0], x[1], x[2], x[3], p[0], p[1], p[2], p[3]};
}

Result<Shape> padShape(const ShapeContext& c) {
    KILN_TRY(needImage(c));
    const auto g = padGeom(c);
    return Shape{c.inputs[0][0], g.oh(), g.ow(), g.c};
}

class ZeroPadKernel final : public CpuKernel {
public:
    explicit ZeroPadKernel(const kernels::Pad2DGeom& g) : m_g(g) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::zeroPad2DForward(m_g, io.in[0], io.out, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0]) kernels::zeroPad2DBackward(m_g, io.dOut, io.dIn[0], *io.pool);
        return {};
    }

private:
    kernels::Pad2DGeom m_g;
};

Result<std::unique_ptr<CpuKernel>> padKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<ZeroPadKernel>(padGeom(c));
}

// ---- UpSampling2D ------------------------------------------------------------------------------
kernels::Upsample2DGeom upGeom(const ShapeContext& c) {
    const Shape& x = c.inputs[0];
    const auto& s = c.attrs.getInts("size");
    return {x[0], x[1], x[2], x[3], s[0], s[1], c.attrs.getString("interpolation") == "bilinear"};
}

Result<Shape> upShape(const ShapeContext& c) {
    KILN_TRY(needImage(c));
    const auto g = upGeom(c);
    return Shape{c.inputs[0][0], g.oh(), g.ow(), g.c};
}

class UpsampleKernel final : public CpuKernel {
public:
    explicit UpsampleKernel(const kernels::Upsample2DGeom& g) : m_g(g) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::upsample2DForward(m_g, io.in[0], io.out, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0]) kernels::upsample2DBackward(m_g, io.dOut, io.dIn[0], *io.pool);
        return {};
    }

private:
    kernels::Upsample2DGeom m_g;
};

Result<std::unique_ptr<CpuKernel>> upKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<UpsampleKernel>(upGeom(c));
}

// ---- Rescaling ---------------------------------------------------------------------------------
Result<Shape> rescaleShape(const ShapeContext& c) {
    if (c.inputs[0].rank() < 2) return shapeError(c, "expects a batch and at least one more dimension");
    return c.inputs[0];
}

class RescaleKernel final : public CpuKernel {
public:
    RescaleKernel(int64_t n, float scale, float offset) : m_n(n), m_scale(scale), m_offset(offset) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::scale(io.in[0], m_scale, io.out, m_n, *io.pool);
        if (m_offset != 0.0f) {
            float* y = io.out;
            const float o = m_offset;
            kernels::parallelElements(*io.pool, m_n, 16384, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) y[i] += o;
            });
        }
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0]) kernels::accumulateScaled(io.dOut, m_scale, io.dIn[0], m_n, *io.pool);
        return {};
    }

private:
    int64_t m_n;
    float m_scale, m_offset;
};

Result<std::unique_ptr<CpuKernel>> rescaleKernel(const ShapeContext& c, const Shape& out) {
    return makeKernel<RescaleKernel>(out.numel(), static_cast<float>(c.attrs.getFloat("scale")),
                                     static_cast<float>(c.attrs.getFloat("offset")));
}

}  // namespace

std::vector<OpDef> imageOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::ZeroPadding2D, "ZeroPadding2D", Category::Core, 1, 1,
                    {intsAttr("padding", {1, 1, 1, 1}, 4, 0, "zero rows and columns added: top, bottom, left, right")},
                    padShape, nullptr, nullptr, padKernel, "Adds rows and columns of zeros around each image"});
    rows.push_back({OpKind::UpSampling2D, "UpSampling2D", Category::Core, 1, 1,
                    {intsAttr("size", {2, 2}, 2, 1, "upsampling factors for height and width"),
                     choiceAttr("interpolation", "nearest", {"nearest", "bilinear"},
                                "\"nearest\" repeats pixels, \"bilinear\" interpolates (half-pixel centres)")},
                    upShape, nullptr, nullptr, upKernel, "Enlarges each image by integer factors"});
    AttrSpec scale{"scale", AttrType::Float, 1.0, true, std::nullopt, std::nullopt, {}, 0,
                   "multiplier, e.g. 1/255 for 8-bit pixels"};
    rows.push_back({OpKind::Rescaling, "Rescaling", Category::Core, 1, 1,
                    {std::move(scale), floatAttr("offset", 0.0, std::nullopt, std::nullopt, "added after scaling")},
                    rescaleShape, nullptr, nullptr, rescaleKernel, "x·scale + offset, e.g. pixel values to [0, 1]"});
    return rows;
}

}  // namespace kiln::engine::ops
