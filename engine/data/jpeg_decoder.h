// SPDX-License-Identifier: Apache-2.0
// JPEG decoding straight through libjpeg(-turbo) for the pipeline's fast paths: only the region a
// crop keeps, or the whole picture reduced in the DCT domain ahead of a large downscale.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <opencv2/core.hpp>

namespace kiln::engine::data {

// Reads a JPEG header once, then decodes one of: a rectangle of the full-size picture (exactly the
// pixels a full decode has there), or the whole picture at 1/2, 1/4 or 1/8 of its size. Pixels
// come out 8-bit RGB for colour files and 8-bit grey for grey files, as decodeImage gives them.
// Whatever this decoder does not handle exactly like a full OpenCV decode — no JPEG, 4-component
// (CMYK/YCCK) or 12-bit files, damaged data, even a libjpeg warning — makes the call return false;
// the caller then decodes with decodeImage, so results and error reports stay those of that path.
// One decoder per thread; `bytes` must outlive it.
class JpegRegionDecoder {
public:
    JpegRegionDecoder();
    ~JpegRegionDecoder();
    JpegRegionDecoder(const JpegRegionDecoder&) = delete;
    JpegRegionDecoder& operator=(const JpegRegionDecoder&) = delete;

    // Reads the header. False when the bytes are not a JPEG this decoder handles.
    bool open(const std::string& bytes);
    // The full picture size from the header (valid after open() returned true).
    int width() const;
    int height() const;
    // The size of the picture decoded at 1/denom (denom 1, 2, 4 or 8): libjpeg rounds up.
    cv::Size scaledSize(int denom) const;

    // `region` (inside the picture) equal to the same rectangle of a full decode. libjpeg decodes
    // whole iMCU columns (8 or 16 pixels) around it and one pixel more on each side, so that the
    // chroma upsampling at the region's edges sees the same neighbours as in the full picture;
    // the extra columns are dropped here. Rows above and below the region are only entropy-decoded
    // (no inverse DCT, no colour conversion): damage anywhere in the file is still noticed.
    bool decodeRegion(const cv::Rect& region, cv::Mat& out);
    // The whole picture at 1/denom (2, 4 or 8): libjpeg's scaled inverse DCT, which averages
    // rather than samples, so the result is what a good area downscale of the full decode gives.
    bool decodeScaled(int denom, cv::Mat& out);

    struct State;

private:
    std::unique_ptr<State> m_state;
};

// How many pictures took each JPEG path since the process started, over all threads: a region
// decoded for a crop, a DCT-scaled decode before a resize (by factor), and a direct attempt given
// up in favour of decodeImage (which then decoded the file, or reported it as bad).
struct JpegPathCounts {
    int64_t cropped = 0;
    int64_t scaledHalf = 0, scaledQuarter = 0, scaledEighth = 0;
    int64_t fallback = 0;

    int64_t scaled() const { return scaledHalf + scaledQuarter + scaledEighth; }
};
JpegPathCounts jpegPathCounts();

}  // namespace kiln::engine::data
